#!/usr/bin/env bash
# The running service: sigil-supervisor (2 workers) behind a private nginx over TLS. Checks JSON
# answers and headers, pool refill after kill -9, the hard timeout, recycling, SIGHUP under load
# without failed requests, and a clean SIGTERM stop.
# Usage: service_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=$(realpath "$1")
src=$(realpath "$2")
bin=$build/bin
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $NGINX ]] || { echo "SKIP: nginx not installed"; exit 77; }
[[ -x $bin/sigil-supervisor && -x $bin/sigil-worker && -x $bin/sigil-sandbox ]] || { echo "FAIL: build sigil-supervisor, sigil-worker and sigil-sandbox first"; exit 1; }

work=$(mktemp -d /tmp/sigil-it-service-XXXXXX)
chmod 755 "$work"  # nginx workers run as nobody when we are root: they must reach the socket
sup_pid=""
ngx_pid=""
load_pid=""

cleanup() {
    local rc=$?
    [[ -n $load_pid ]] && kill "$load_pid" 2>/dev/null || true
    [[ -n $ngx_pid ]] && kill -QUIT "$ngx_pid" 2>/dev/null || true
    local left=""
    if [[ -n $sup_pid ]] && kill -0 "$sup_pid" 2>/dev/null; then
        left=$(pgrep -P "$sup_pid" || true)
        kill -TERM "$sup_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$sup_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$sup_pid" 2>/dev/null || true
    fi
    # Workers die with the supervisor (parent-death signal); make sure none survive a failure.
    for w in $left; do kill -KILL "$w" 2>/dev/null || true; done
    if [[ -n $ngx_pid ]]; then
        for _ in $(seq 20); do kill -0 "$ngx_pid" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$ngx_pid" 2>/dev/null || true
    fi
    wait 2>/dev/null || true
    if [[ $rc -ne 0 ]]; then
        echo "---- supervisor log"; tail -40 "$work/supervisor.log" 2>/dev/null || true
        echo "---- nginx error log"; tail -20 "$work/nginx/logs/error.log" 2>/dev/null || true
    fi
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT




port=$(free_port)
base=https://127.0.0.1:$port
socket=$work/run/fcgi.sock
mkdir -p "$work/evidence"
echo "abc  file.txt" > "$work/evidence/sha256sum.txt"

cat > "$work/sigil.conf" <<CONF
[supervisor]
socket_path = $socket
workers = 2
zygotes = 2
# A static pool of two: the checks below count its workers (pool.test.mjs tests the dynamic one).
max_workers = 2
reserve_workers = 1
max_requests = 40
request_hard_timeout_s = 2
graceful_stop_timeout_s = 5
[worker]
max_body_bytes = 4096
test_routes = true
CONF

# A [worker] public_hosts entry that is not a host name is a configuration error, not a 500 per fetch.
printf '[worker]\npublic_hosts = localhost, not a name\n' >"$work/bad-hosts.conf"
if "$bin/sigil-worker" -c "$work/bad-hosts.conf" --check >"$work/check.log" 2>&1; then fail "bad public_hosts accepted"; fi
grep -q "public_hosts" "$work/check.log" || fail "bad public_hosts: no clear message: $(cat "$work/check.log")"
pass "sigil-worker --check refuses a public_hosts entry that is not a name"

# Core dumps allowed where the hard limit lets us, so the check below sees the workers' own setting.
( ulimit -c unlimited 2>/dev/null || true; exec "$bin/sigil-supervisor" -c "$work/sigil.conf" ) >"$work/supervisor.log" 2>&1 &
sup_pid=$!
"$src/nginx/render-dev.sh" "$work/nginx" "$port" "$socket" "$work/evidence" 4096 10 >/dev/null
"$NGINX" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>>"$work/nginx-stderr.log" &
ngx_pid=$!

# req URL [curl args...]: status code on stdout; body in $work/body, headers in $work/headers.
req() {
    local url=$1; shift
    curl -sk --max-time 20 -o "$work/body" -D "$work/headers" -w '%{http_code}' "$@" "$base$url" || echo "000"
}
header() { grep -i "^$1:" "$work/headers" | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//'; }
expect_json_error() {  # expect_json_error STATUS CODE GOT_STATUS
    [[ $3 == "$1" ]] || fail "expected $1, got $3: $(cat "$work/body")"
    [[ $(header content-type) == application/json* ]] || fail "status $1 without JSON content type"
    [[ $(jget "$work/body" error.code) == "$2" ]] || fail "expected error code $2: $(cat "$work/body")"
}
workers() { { pgrep -P "$sup_pid" -x sigil-worker || true; } | sort; }
zygotes() { { pgrep -P "$sup_pid" -x sigil-sandbox || true; } | sort; }
health_total() { [[ $(req /health) == 200 ]] && jget "$work/body" workers.total || echo 0; }
wait_busy() {  # wait until /health shows a worker busy besides the one answering it
    for _ in $(seq 100); do
        [[ $(req /health) == 200 ]] && (( $(jget "$work/body" workers.busy) >= 2 )) && return 0
        sleep 0.02
    done
    fail "no worker became busy"
}
wait_lines() {  # wait_lines FILE N: until FILE has at least N lines
    for _ in $(seq 500); do
        [[ -f $1 ]] && (( $(wc -l <"$1") >= $2 )) && return 0
        sleep 0.02
    done
    fail "$1 did not reach $2 lines"
}
wait_pool() {  # wait until the pool shows 2 workers, not counting `exclude`
    for _ in $(seq 50); do
        local w; w=$(workers | { grep -vx "${1:-none}" || true; } | wc -l)
        [[ $w -eq 2 && $(health_total) == 2 ]] && return 0
        sleep 0.1
    done
    fail "pool did not refill to 2 workers"
}

for _ in $(seq 50); do [[ $(req /health) == 200 ]] && break; kill -0 "$sup_pid" 2>/dev/null || fail "supervisor exited at start"; sleep 0.1; done

# --- /health, headers
[[ $(req /health -H 'X-Correlation-Id: it-corr-42') == 200 ]] || fail "/health: $(cat "$work/body")"
[[ $(jget "$work/body" status) == ok ]] || fail "health status"
[[ $(jget "$work/body" workers.total) == 2 ]] || fail "health workers.total: $(cat "$work/body")"
[[ $(header content-type) == application/json ]] || fail "health content type"
rid=$(header x-request-id)
[[ $rid =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] || fail "X-Request-Id not a UUID v4: $rid"
[[ $(header x-correlation-id) == it-corr-42 ]] || fail "X-Correlation-Id not echoed"
req /health >/dev/null
[[ $(header x-request-id) != "$rid" ]] || fail "X-Request-Id repeated"
[[ -z $(header x-correlation-id) ]] || fail "X-Correlation-Id invented"
pass "/health JSON with worker counts, X-Request-Id UUID v4, X-Correlation-Id echoed"

# --- the sandbox zygotes: the supervisor's `zygotes = 2` children running the sigil-sandbox
# executable (exec'd, not a fork of anything that saw a request), shared by the workers, which have
# none of their own; a zygote's memory maps hold no libcurl or libfcgi while a worker's hold both.
# Sandbox children fork from a zygote, so they carry neither.
z_all=$(zygotes)
[[ $(wc -w <<<"$z_all") -eq 2 ]] || fail "expected 2 zygotes under the supervisor, got '$z_all'"
for w in $(workers); do
    [[ -z $(pgrep -P "$w" || true) ]] || fail "worker $w has children of its own: $(pgrep -P "$w" | tr '\n' ' ')"
    grep -q libcurl "/proc/$w/maps" && grep -q libfcgi "/proc/$w/maps" || fail "worker $w maps no libcurl/libfcgi: the check is blind"
done
for z in $z_all; do
    [[ $(readlink "/proc/$z/exe") == "$bin/sigil-sandbox" ]] || fail "zygote $z runs $(readlink "/proc/$z/exe")"
    zmaps=$(cat "/proc/$z/maps")
    # Loaded (right after exec the libraries may not be mapped yet): libcrypto is common's.
    grep -q libcrypto <<<"$zmaps" || fail "zygote $z maps no libcrypto: not loaded yet?"
    ! grep -qE 'libcurl|libfcgi' <<<"$zmaps" || fail "zygote $z maps $(grep -oE '[^ ]*(libcurl|libfcgi)[^ ]*' <<<"$zmaps" | sort -u | tr '\n' ' ')"
done
pass "2 shared zygotes under the supervisor run sigil-sandbox and map no libcurl or libfcgi (the workers map both and have no zygote of their own)"

# sigil-worker --check finds sigil-sandbox beside itself by default, and refuses a sandbox_path
# that is not an executable (exit 78, the key named) instead of failing at the first start.
"$bin/sigil-worker" -c "$work/sigil.conf" --check >/dev/null 2>"$work/check.err" || fail "worker --check: $(cat "$work/check.err")"
{ cat "$work/sigil.conf"; printf '[actions]\nsandbox_path = %s\n' "$work/no-such-sandbox"; } >"$work/bad-sandbox.conf"
rc=0; "$bin/sigil-worker" -c "$work/bad-sandbox.conf" --check >/dev/null 2>"$work/check.err" || rc=$?
[[ $rc -eq 78 ]] && grep -q "sandbox_path.*no-such-sandbox" "$work/check.err" || fail "worker --check with a missing sandbox: exit $rc, $(cat "$work/check.err")"
pass "sigil-worker --check finds sigil-sandbox, refuses a missing sandbox_path (78)"

[[ $(req /core/v1/version) == 200 && $(jget "$work/body" service) == sigil ]] || fail "version"
expect_json_error 404 not_found "$(req /core/v1/no_such_endpoint)"
expect_json_error 405 method_not_allowed "$(req /core/v1/version -X POST -d '{}' -H 'Content-Type: application/json')"
expect_json_error 503 attestation_unavailable "$(req /attestation)"
expect_json_error 503 attestation_unavailable "$(req /info)"
pass "version, 404, 405, attestation 503 as JSON"

# --- an account's master key (the owner wallet's secret) passes through workers: no core dumps
for w in $(workers); do
    grep -Eq '^Max core file size +0 +0 ' "/proc/$w/limits" || fail "worker $w may dump core: $(grep 'core file' "/proc/$w/limits")"
done
pass "workers run with RLIMIT_CORE 0 (and PR_SET_DUMPABLE 0)"

expect_json_error 415 unsupported_media_type "$(req /core/v1/test/echo -H 'Content-Type: text/plain' --data-binary 'hello')"
expect_json_error 422 malformed_json "$(req /core/v1/test/echo -H 'Content-Type: application/json' --data-binary '{"a":')"
[[ $(req /core/v1/test/echo -H 'Content-Type: application/json' --data-binary '{"a":[1,2]}') == 200 ]] || fail "echo"
[[ $(jget "$work/body" echo.a) == "[1,2]" ]] || fail "echo body: $(cat "$work/body")"
head -c 8192 /dev/zero | tr '\0' x > "$work/big.json"
expect_json_error 413 body_too_large "$(req /core/v1/test/echo -H 'Content-Type: application/json' --data-binary @"$work/big.json")"
pass "POST body checks: 415, 422, 200, 413 (all JSON)"

[[ $(req /evidences/) == 200 ]] && grep -q sha256sum.txt "$work/body" || fail "evidence listing"
[[ $(req /evidences/sha256sum.txt) == 200 ]] || fail "evidence file"
expect_json_error 404 not_found "$(req /evidences/missing.txt)"
pass "/evidences/ static with listing, JSON 404 from nginx"

# --- kept connections: nginx reuses its connections to the workers, and a request nginx sends on a
# connection held by a worker busy with a long request is passed to the idle worker, not stalled.
[[ $(req /health) == 200 ]] || fail "health"
accepted_before=$(jget "$work/body" workers.connections_accepted)
for _ in $(seq 30); do [[ $(req /core/v1/version) == 200 ]] || fail "version during keep-alive check"; done
[[ $(req /health) == 200 ]] || fail "health"
accepted=$(( $(jget "$work/body" workers.connections_accepted) - accepted_before ))
(( accepted <= 4 )) || fail "31 sequential requests opened $accepted new FastCGI connections (kept connections unused)"
curl -sk --max-time 20 -o /dev/null "$base/core/v1/test/sleep?ms=1500" &
slow_curl=$!
wait_busy
slowest=0
for _ in $(seq 20); do
    t=$(curl -sk --max-time 5 -o /dev/null -w '%{http_code} %{time_total}' "$base/core/v1/version")
    [[ ${t% *} == 200 ]] || fail "request beside a long one: ${t% *}"
    slowest=$(awk -v a="$slowest" -v b="${t#* }" 'BEGIN { print (b > a ? b : a) }')
done
wait "$slow_curl"
awk -v s="$slowest" 'BEGIN { exit !(s < 0.5) }' || fail "a request waited ${slowest}s behind a long request on another connection"
pass "kept connections: $accepted new connections for 31 requests; beside a 1.5 s request the slowest of 20 took ${slowest}s"

# --- kill -9 an idle worker: the pool refills and requests keep succeeding
victim=$(workers | head -1)
kill -KILL "$victim"
wait_pool "$victim"
for _ in 1 2 3 4; do [[ $(req /health) == 200 ]] || fail "request after kill -9"; done
pass "kill -9 of an idle worker: pool refilled"

# --- kill -9 a busy worker: its client gets a JSON 502 from nginx, then the pool refills
curl -sk --max-time 20 -o "$work/busy_body" -w '%{http_code}' "$base/core/v1/test/sleep?ms=1500" >"$work/busy_code" &
busy_curl=$!
wait_busy
for w in $(workers); do kill -KILL "$w"; done
wait "$busy_curl" || true
[[ $(cat "$work/busy_code") == 502 && $(jget "$work/busy_body" error.code) == service_unavailable ]] ||
    fail "busy worker killed: expected JSON 502, got $(cat "$work/busy_code") $(cat "$work/busy_body")"
wait_pool
[[ $(req /health) == 200 ]] || fail "request after killing busy workers"
pass "kill -9 of busy workers: JSON 502 for the in-flight request, pool refilled"

# --- hard timeout: a request past request_hard_timeout_s (2 s) is SIGKILLed by the supervisor
code=$(req "/core/v1/test/sleep?ms=8000")
[[ $code == 502 ]] || fail "hard timeout: expected 502, got $code"
grep -q 'request_hard_timeout_s' "$work/supervisor.log" || fail "no hard-timeout kill in the supervisor log"
wait_pool
pass "hard timeout kill"

# --- SIGHUP with an invalid config file: refused, the running pool keeps serving
cp "$work/sigil.conf" "$work/sigil.conf.good"
printf '[supervisor]\nworkrs = 3\n' >>"$work/sigil.conf"
kept=$(workers | tr '\n' ' ')
kill -HUP "$sup_pid"
for _ in $(seq 30); do grep -q 'reload refused' "$work/supervisor.log" && break; sleep 0.1; done
grep -q 'reload refused.*supervisor.workrs' "$work/supervisor.log" || fail "invalid config not refused by name on SIGHUP"
[[ $(req /health) == 200 && $(workers | tr '\n' ' ') == "$kept" ]] || fail "pool disturbed by a refused reload"
# A worker started now gets the validated snapshot, not the broken file.
victim=$(workers | head -1)
kill -KILL "$victim"
wait_pool "$victim"
cp "$work/sigil.conf.good" "$work/sigil.conf"
pass "SIGHUP with an invalid config: refused (naming the key), pool untouched, respawn uses the valid snapshot"

# --- SIGHUP under load from a second process: no request may fail
before=$(workers | tr '\n' ' ')
(
    fails=0
    for i in $(seq 120); do
        c=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "$base/core/v1/test/sleep?ms=20") || c=000
        [[ $c == 200 ]] || { fails=$((fails + 1)); echo "request $i: $c" >>"$work/load_failures"; }
        echo "$i" >>"$work/load_progress"
    done
    echo "$fails" >"$work/load_result"
) &
load_pid=$!
wait_lines "$work/load_progress" 10
kill -HUP "$sup_pid"
for _ in $(seq 100); do grep -q 'reloading: generation 2' "$work/supervisor.log" && break; sleep 0.02; done
wait_lines "$work/load_progress" 40
kill -HUP "$sup_pid"
wait "$load_pid"
load_pid=""
[[ $(cat "$work/load_result") == 0 ]] || fail "requests failed during reload: $(cat "$work/load_failures")"
wait_pool
after=$(workers | tr '\n' ' ')
[[ $before != "$after" ]] || fail "SIGHUP did not replace the workers"
grep -q 'reloading: generation 3' "$work/supervisor.log" || fail "second reload not logged"
# --- recycling: 90 requests over 2 workers means one of them serves at least 45 > max_requests (40)
for i in $(seq 90); do
    c=$(curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "$base/core/v1/version") || c=000
    [[ $c == 200 ]] || fail "request $i while workers recycle: $c"
done
grep -q 'exiting for recycling' "$work/supervisor.log" || fail "no worker recycled after max_requests"
pass "SIGHUP x2 under load (120 requests, 0 failed), workers replaced; max_requests recycling seen"

# --- SIGTERM: the in-flight request completes, then everything stops and the socket is removed
all_workers=$(workers)
curl -sk --max-time 20 -o /dev/null -w '%{http_code}' "$base/core/v1/test/sleep?ms=1200" >"$work/inflight_code" &
inflight=$!
wait_busy
kill -TERM "$sup_pid"
wait "$inflight" || true
[[ $(cat "$work/inflight_code") == 200 ]] || fail "in-flight request during SIGTERM: $(cat "$work/inflight_code")"
for _ in $(seq 100); do kill -0 "$sup_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$sup_pid" 2>/dev/null && fail "supervisor still running 10 s after SIGTERM"
wait "$sup_pid" && rc=0 || rc=$?
[[ $rc == 0 ]] || fail "supervisor exit code $rc"
sup_pid=""
for w in $all_workers $z_all; do kill -0 "$w" 2>/dev/null && fail "worker or zygote $w survived SIGTERM"; done
[[ ! -e $socket ]] || fail "socket left behind"
expect_json_error 502 service_unavailable "$(req /health)"
pass "SIGTERM: in-flight request finished (200), supervisor, workers and zygotes gone, socket removed, nginx answers JSON 502"
echo "all service integration checks passed"
