#!/usr/bin/env bash
# Checks the systemd units in systemd/: systemd-analyze verify finds no warning or error in them,
# the hardening directives the design relies on are present, the offline exposure scores stay
# under their thresholds, sysusers/tmpfiles files apply to a scratch root, and the ExecStart
# command lines are accepted by the real binaries (verify checks only that the binaries exist).
# Needs no running systemd. Usage: systemd_units_test.sh BUILD_DIR SOURCE_DIR. Exit 77 = skipped.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
    exit 64
fi
build=$(realpath "$1")
src=$(realpath "$2")
units=$src/systemd

# Thresholds sit a little above the scores measured with systemd 252 (keyd 0.6, supervisor 1.5):
# a change that loosens the sandbox fails here rather than going unnoticed.
KEYD_MAX_EXPOSURE=1.0
SUPERVISOR_MAX_EXPOSURE=2.0
EVIDENCE_MAX_EXPOSURE=1.3  # measured 0.9 (root, but no network, no capabilities, one writable folder)
LOWERER_MAX_EXPOSURE=0.8    # measured 0.4 (no network, no capabilities, nothing writable; no MemoryDenyWriteExecute)

command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

find_binary() {
    local name=$1 dir
    for dir in bin keyd supervisor workers; do
        [[ -x $build/$dir/$name ]] && { echo "$build/$dir/$name"; return 0; }
    done
    echo "FAIL: $name not built under $build (bin/, keyd/, supervisor/)" >&2
    return 1
}
keyd_bin=$(find_binary sigil-keyd)
supervisor_bin=$(find_binary sigil-supervisor)
evidence_bin=$(find_binary sigil-evidence)
node_bin=$(command -v node)
lowerer_js=$build/bin/sigil-lowerer.cjs
[[ -f $lowerer_js ]] || { echo "FAIL: $lowerer_js not built" >&2; exit 1; }

work=$(mktemp -d /tmp/sigil-systemd-verify.XXXXXX)
keyd_pid=""
lowerer_pid=""
cleanup() {
    [[ -n $keyd_pid ]] && kill "$keyd_pid" 2>/dev/null && wait "$keyd_pid" 2>/dev/null
    [[ -n $lowerer_pid ]] && kill "$lowerer_pid" 2>/dev/null && wait "$lowerer_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# --- 1. systemd-analyze verify -------------------------------------------------------------
# The units, with the install paths pointed at the build's binaries so verify can check them.
stage_units() {
    local dir=$1
    mkdir -p "$dir/nginx.service.d"
    sed -e "s|/usr/local/bin/sigil-keyd|$keyd_bin|g" "$units/sigil-keyd.service" >"$dir/sigil-keyd.service"
    sed -e "s|/usr/local/bin/sigil-supervisor|$supervisor_bin|g" "$units/sigil-supervisor.service" \
        >"$dir/sigil-supervisor.service"
    sed -e "s|/usr/local/bin/sigil-evidence|$evidence_bin|g" "$units/sigil-evidence.service" >"$dir/sigil-evidence.service"
    sed -e "s|/usr/bin/node|$node_bin|g" -e "s|/usr/local/lib/sigil/sigil-lowerer.cjs|$lowerer_js|g" \
        "$units/sigil-lowerer.service" >"$dir/sigil-lowerer.service"
    cp "$units/sigil-evidence.path" "$dir/sigil-evidence.path"
    cp "$units/nginx.service.d/sigil.conf" "$dir/nginx.service.d/sigil.conf"
    # The drop-in is checked against Debian's nginx unit when installed, else a stand-in.
    if [[ -f /lib/systemd/system/nginx.service ]]; then
        cp /lib/systemd/system/nginx.service "$dir/nginx.service"
    else
        printf '[Unit]\nDescription=stand-in for nginx\n[Service]\nExecStart=/bin/true\n' >"$dir/nginx.service"
    fi
}

# Prints verify's output lines that concern the units in DIR; status 1 if there are any or
# verify itself failed. Lines about other units (from the host's unit path) are only shown.
verify_units() {
    local dir=$1 out rc=0 ours
    out=$(cd "$dir" && systemd-analyze verify --man=no ./sigil-keyd.service ./sigil-supervisor.service \
        ./sigil-lowerer.service ./sigil-evidence.service ./sigil-evidence.path ./nginx.service 2>&1) || rc=$?
    ours=$(grep -E "$dir|sigil-(keyd|supervisor|lowerer)\.service|sigil-evidence\.(service|path)|nginx\.service" <<<"$out" || true)
    grep -vE "$dir|sigil-(keyd|supervisor|lowerer)\.service|sigil-evidence\.(service|path)|nginx\.service" <<<"$out" |
        sed -e '/^$/d' -e 's/^/  (other unit) /' || true
    [[ -n $ours ]] && echo "$ours"
    [[ $rc -eq 0 && -z $ours ]]
}

stage_units "$work/units"
grep -qE '/usr/local/(bin|lib/sigil)/sigil-' "$work/units"/*.service && fail "a binary path was not substituted"
if report=$(verify_units "$work/units"); then
    pass "systemd-analyze verify: no warnings for sigil-keyd, sigil-supervisor, sigil-lowerer, sigil-evidence (.service, .path), nginx + drop-in"
else
    fail "systemd-analyze verify reported:"
    echo "$report"
fi

# Control: verify must load our files and the drop-in, so a bad key in each has to be reported.
stage_units "$work/control"
echo "NoSuchDirective=1" >>"$work/control/sigil-keyd.service"
echo "NoSuchDirective=1" >>"$work/control/nginx.service.d/sigil.conf"
report=$(verify_units "$work/control" || true)
if grep -q 'sigil-keyd.service.*NoSuchDirective' <<<"$report" &&
    grep -q 'nginx.service.d/sigil.conf.*NoSuchDirective' <<<"$report"; then
    pass "control: verify reports an unknown key in the keyd unit and in the nginx drop-in"
else
    fail "control: verify did not report the planted unknown keys: $report"
fi

# --- 2. the hardening the design relies on ---------------------------------------------------
require_lines() {
    local file=$1 line missing=0
    shift
    for line in "$@"; do
        grep -qxF -- "$line" "$file" || { fail "$(basename "$file") lacks '$line'"; missing=1; }
    done
    [[ $missing -eq 0 ]] && pass "$(basename "$file"): all $# required directives present"
    return 0
}
common_hardening=(
    "NoNewPrivileges=yes" "CapabilityBoundingSet=" "ProtectSystem=strict" "ProtectHome=yes"
    "PrivateTmp=yes" "PrivateDevices=yes" "ProtectKernelTunables=yes" "ProtectKernelModules=yes"
    "ProtectKernelLogs=yes" "ProtectControlGroups=yes" "ProtectClock=yes" "ProtectHostname=yes"
    "RestrictNamespaces=yes" "LockPersonality=yes" "MemoryDenyWriteExecute=yes" "RestrictRealtime=yes"
    "RestrictSUIDSGID=yes" "SystemCallArchitectures=native" "LimitCORE=0" "UMask=0077"
    "Restart=on-failure")
require_lines "$units/sigil-keyd.service" "${common_hardening[@]}" \
    "Type=simple" "User=sigil-keyd" "RestrictAddressFamilies=AF_UNIX" "IPAddressDeny=any" \
    "PrivateNetwork=yes" "LimitMEMLOCK=infinity" "RuntimeDirectory=sigil-keyd" "RuntimeDirectoryMode=0750" \
    "StateDirectory=sigil-keyd" "StateDirectoryMode=0700"
require_lines "$units/sigil-supervisor.service" "${common_hardening[@]}" \
    "Type=notify" "NotifyAccess=main" "User=sigil" "Requires=sigil-keyd.service" \
    "SupplementaryGroups=sigil-keyd-clients sigil-fcgi sigil-lowerer-clients" "KillMode=mixed" "KillSignal=SIGTERM" \
    "ExecReload=/bin/kill -HUP \$MAINPID" "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" \
    "RuntimeDirectory=sigil" "Wants=sigil-lowerer.service"
# sigil-lowerer runs V8, whose compiler needs writable-then-executable memory: everything else holds.
lowerer_hardening=()
for line in "${common_hardening[@]}"; do [[ $line == MemoryDenyWriteExecute=yes ]] || lowerer_hardening+=("$line"); done
require_lines "$units/sigil-lowerer.service" "${lowerer_hardening[@]}" \
    "Type=simple" "User=sigil-lowerer" "Group=sigil-lowerer-clients" "RestrictAddressFamilies=AF_UNIX" \
    "IPAddressDeny=any" "PrivateNetwork=yes" "RuntimeDirectory=sigil-lowerer" "RuntimeDirectoryMode=0750" \
    "Before=sigil-supervisor.service"
grep -q '^MemoryDenyWriteExecute=' "$units/sigil-lowerer.service" &&
    fail "sigil-lowerer.service sets MemoryDenyWriteExecute= (V8's compiler cannot run under it)"
grep -qE '^After=.*\bsigil-keyd\.service\b' "$units/sigil-supervisor.service" ||
    fail "sigil-supervisor.service is not ordered after sigil-keyd.service"
# sigil-evidence runs once per certificate (oneshot) and writes world-readable files on purpose.
evidence_hardening=("${common_hardening[@]/UMask=0077/UMask=0022}")
require_lines "$units/sigil-evidence.service" "${evidence_hardening[@]/Restart=on-failure/Type=oneshot}" \
    "RestrictAddressFamilies=AF_UNIX" "IPAddressDeny=any" "PrivateNetwork=yes" "ReadWritePaths=/var/lib/sigil"
require_lines "$units/sigil-evidence.path" "Unit=sigil-evidence.service"
require_lines "$units/nginx.service.d/sigil.conf" "Wants=sigil-supervisor.service" "After=sigil-supervisor.service"
# The drop-in may only add ordering: no [Service] overrides that could weaken Debian's unit.
grep -qE '^\[(Service|Install)\]' "$units/nginx.service.d/sigil.conf" && fail "the nginx drop-in overrides more than [Unit]"

# --- 3. offline exposure scores --------------------------------------------------------------
exposure() {
    local unit=$1 out
    out=$(cd "$work/units" && systemd-analyze security --offline=true --no-pager "./$unit" 2>&1) || true
    sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p" <<<"$out"
}
if (cd "$work/units" && systemd-analyze security --offline=true --no-pager ./sigil-keyd.service >/dev/null 2>&1); then
    for pair in "sigil-keyd.service:$KEYD_MAX_EXPOSURE" "sigil-supervisor.service:$SUPERVISOR_MAX_EXPOSURE" \
        "sigil-evidence.service:$EVIDENCE_MAX_EXPOSURE" "sigil-lowerer.service:$LOWERER_MAX_EXPOSURE"; do
        unit=${pair%%:*} max=${pair#*:}
        score=$(exposure "$unit")
        if [[ -z $score ]]; then
            fail "no exposure score for $unit"
        elif awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
            pass "exposure of $unit: $score (threshold $max)"
        else
            fail "exposure of $unit: $score is above the threshold $max"
        fi
    done
else
    echo "note: this systemd-analyze has no 'security --offline'; exposure not measured"
fi

# --- 4. sysusers and tmpfiles apply to a scratch root ----------------------------------------
root=$work/root
mkdir -p "$root/etc"
if [[ $(id -u) -ne 0 ]]; then
    echo "note: not root; sysusers/tmpfiles not applied (they chown to the new users)"
elif ! command -v systemd-sysusers >/dev/null || ! command -v systemd-tmpfiles >/dev/null; then
    echo "note: no systemd-sysusers/systemd-tmpfiles; those files not applied"
else
cp /etc/passwd /etc/group "$root/etc/"  # www-data comes from the host, as on Debian
if systemd-sysusers --root="$root" "$units/sigil.sysusers.conf" >"$work/sysusers.log" 2>&1; then
    for user in sigil sigil-keyd sigil-lowerer; do
        grep -q "^$user:" "$root/etc/passwd" || fail "sysusers did not create user $user"
    done
    for group in sigil-keyd-clients sigil-lowerer-clients; do
        grep -q "^$group:" "$root/etc/group" || fail "sysusers did not create group $group"
    done
    grep -qE '^sigil-fcgi:.*[:,]www-data(,|$)' "$root/etc/group" || fail "www-data is not in group sigil-fcgi"
    pass "sysusers: users sigil, sigil-keyd, sigil-lowerer; groups sigil-keyd-clients, sigil-lowerer-clients, sigil-fcgi (www-data a member)"
else
    fail "systemd-sysusers refused the file: $(cat "$work/sysusers.log")"
fi
if systemd-tmpfiles --root="$root" --create "$units/sigil.tmpfiles.conf" >"$work/tmpfiles.log" 2>&1; then
    keyd_uid=$(awk -F: '$1 == "sigil-keyd" { print $3 }' "$root/etc/passwd")
    [[ $(stat -c '%a %u' "$root/var/lib/sigil-keyd") == "700 $keyd_uid" ]] ||
        fail "/var/lib/sigil-keyd is not 0700 sigil-keyd: $(stat -c '%a %u' "$root/var/lib/sigil-keyd")"
    [[ $(stat -c '%a' "$root/etc/sigil") == 750 ]] || fail "/etc/sigil is not 0750"
    pass "tmpfiles: /etc/sigil, /var/lib/sigil-keyd, /var/lib/sigil created with their modes"
else
    fail "systemd-tmpfiles refused the file: $(cat "$work/tmpfiles.log")"
fi
fi

# --- 5. the ExecStart command lines are ones the binaries accept -----------------------------
# One logical line (continuations joined) of KEY= from a unit file.
unit_value() {
    awk -v key="$2=" '
        joined != "" || index($0, key) == 1 {
            line = $0; cont = sub(/\\$/, "", line); joined = joined line
            if (!cont) { print substr(joined, length(key) + 1); exit }
        }' "$1"
}
if [[ $(id -u) -eq 0 ]]; then
    # keyd as the unit starts it, with a test keyd.env, the runtime and state directories moved
    # into the scratch dir. Bash expands ${VAR} and $VAR here as systemd would for these values.
    mkdir -p "$work/run/sigil-keyd" "$work/state"
    chmod 0750 "$work/run/sigil-keyd"
    SIGIL_KEYD_KEY_SOURCE="--root-key-file $work/state/root.key"
    SIGIL_KEYD_ALLOWED_UID=0 SIGIL_KEYD_SOCKET_GID=$(id -g) SIGIL_CHAIN_ID=31337
    SIGIL_CONTRACT=0x5FbDB2315678afecb367f032d93F642f64180aa3 SIGIL_KEYD_PAYERS=4 SIGIL_KEYD_MAX_CONNECTIONS=8
    exec_start=$(unit_value "$work/units/sigil-keyd.service" ExecStart)
    exec_start=${exec_start//\/run\/sigil-keyd/$work/run/sigil-keyd}
    eval "keyd_argv=($exec_start)"
    "${keyd_argv[@]}" >"$work/keyd.log" 2>&1 &
    keyd_pid=$!
    for _ in $(seq 1 50); do
        [[ -S $work/run/sigil-keyd/keyd.sock ]] && break
        kill -0 "$keyd_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -S $work/run/sigil-keyd/keyd.sock ]]; then
        mode=$(stat -c '%a %g' "$work/run/sigil-keyd/keyd.sock")
        [[ $mode == "660 $(id -g)" ]] && pass "keyd accepts the unit's ExecStart; socket $mode" ||
            fail "keyd's socket is '$mode', expected '660 $(id -g)' (--socket-group)"
        [[ $(stat -c '%a' "$work/state/root.key") == 600 ]] || fail "the dev root key is not 0600"
    else
        fail "keyd did not start from the unit's ExecStart: $(cat "$work/keyd.log")"
    fi
    kill "$keyd_pid" 2>/dev/null || true
    wait "$keyd_pid" 2>/dev/null || true
    keyd_pid=""

    # The unit's own key source (no keyd.env override): the TEE guest agent's GetKey, here served by
    # sigil-tee-sim on a socket in the scratch dir in place of /var/run/dstack.sock.
    unit_source=$(grep -o '^Environment="SIGIL_KEYD_KEY_SOURCE=[^"]*"' "$work/units/sigil-keyd.service" | sed 's/^Environment="SIGIL_KEYD_KEY_SOURCE=//; s/"$//')
    if [[ $unit_source == "--tee-key-service /var/run/dstack.sock" ]]; then
        pass "the keyd unit's default key source is the TEE key service"
        node "$src/evidence/tee-sim/sigil-tee-sim.mjs" --socket "$work/tee/dstack.sock" \
            --app-id 0x5fbdb2315678afecb367f032d93f642f64180aa3 --compose "$src/evidence/dev/app-compose.json" \
            >"$work/tee-sim.log" 2>&1 &
        sim_pid=$!
        for _ in $(seq 1 100); do [[ -S $work/tee/dstack.sock ]] && break; sleep 0.1; done
        SIGIL_KEYD_KEY_SOURCE=${unit_source//\/var\/run\/dstack.sock/$work/tee/dstack.sock}
        rm -f "$work/run/sigil-keyd/keyd.sock"
        eval "keyd_argv=($exec_start)"
        "${keyd_argv[@]}" >"$work/keyd-tee.log" 2>&1 &
        keyd_pid=$!
        for _ in $(seq 1 100); do
            [[ -S $work/run/sigil-keyd/keyd.sock ]] && break
            kill -0 "$keyd_pid" 2>/dev/null || break
            sleep 0.1
        done
        if [[ -S $work/run/sigil-keyd/keyd.sock ]] && grep -q 'GetKey path "sigil/root/v1"' "$work/tee-sim.log"; then
            pass "keyd starts from the unit's ExecStart with the TEE key source"
        else
            fail "keyd did not start with the unit's TEE key source: $(cat "$work/keyd-tee.log")"
        fi
        kill "$keyd_pid" 2>/dev/null || true
        wait "$keyd_pid" 2>/dev/null || true
        keyd_pid=""
        kill "$sim_pid" 2>/dev/null || true
        wait "$sim_pid" 2>/dev/null || true
    else
        fail "the keyd unit's default key source is '$unit_source', not the TEE key service"
    fi
else
    echo "note: not root; keyd's ExecStart not run (its socket-group chown needs a group we are in)"
fi

# sigil-lowerer as the unit starts it, its runtime directory moved into the scratch dir: it listens
# with the socket mode the supervisor's group membership relies on, and stops on SIGTERM.
mkdir -p "$work/run/sigil-lowerer"
exec_start=$(unit_value "$work/units/sigil-lowerer.service" ExecStart)
exec_start=${exec_start//\/run\/sigil-lowerer/$work/run/sigil-lowerer}
eval "lowerer_argv=($exec_start)"
(umask 0077 && exec "${lowerer_argv[@]}") >"$work/lowerer.log" 2>&1 &
lowerer_pid=$!
for _ in $(seq 1 100); do
    [[ -S $work/run/sigil-lowerer/lowerer.sock ]] && break
    kill -0 "$lowerer_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -S $work/run/sigil-lowerer/lowerer.sock ]]; then
    mode=$(stat -c '%a' "$work/run/sigil-lowerer/lowerer.sock")
    [[ $mode == 660 ]] && pass "sigil-lowerer accepts the unit's ExecStart; socket $mode" ||
        fail "sigil-lowerer's socket is $mode, expected 660"
else
    fail "sigil-lowerer did not start from the unit's ExecStart: $(cat "$work/lowerer.log")"
fi
kill "$lowerer_pid" 2>/dev/null || true
wait "$lowerer_pid" 2>/dev/null || true
lowerer_pid=""
[[ -e $work/run/sigil-lowerer/lowerer.sock ]] && fail "sigil-lowerer left its socket behind on SIGTERM"

# The supervisor's ExecStart with --check, on the example config set up as systemd/README.md says.
sed -e 's|^socket_mode = .*|socket_mode = 0660|' -e 's|^socket_group =.*|socket_group = sigil-fcgi|' \
    -e 's|^socket_path =$|socket_path = /run/sigil-keyd/keyd.sock|' \
    "$src/sigil.conf.example" >"$work/sigil.conf"
exec_start=$(unit_value "$work/units/sigil-supervisor.service" ExecStart)
exec_start=${exec_start//\/etc\/sigil\/sigil.conf/$work/sigil.conf}
eval "supervisor_argv=($exec_start)"
if "${supervisor_argv[@]}" --check >"$work/check.log" 2>&1; then
    pass "sigil-supervisor accepts the unit's ExecStart (--check on the README's config)"
else
    fail "sigil-supervisor refused the unit's ExecStart: $(cat "$work/check.log")"
fi

if [[ $failures -ne 0 ]]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all systemd checks passed"
