#!/usr/bin/env bash
# keyd killed and restarted under a running service: while keyd is gone every worker answers
# /health at once with 503 "keyd":"unavailable" (no request hangs); when keyd is back, every
# worker reconnects by itself and /health is 200 again.
# Usage: keyd_restart_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=$(realpath "$1")
src=$(realpath "$2")
bin=$build/bin
keyd_bin=$build/keyd/sigil-keyd
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $NGINX ]] || { echo "SKIP: nginx not installed"; exit 77; }
for b in "$bin/sigil-supervisor" "$bin/sigil-worker" "$keyd_bin"; do [[ -x $b ]] || { echo "FAIL: $b not built"; exit 1; }; done

work=$(mktemp -d /tmp/sigil-it-keyd-XXXXXX)
chmod 755 "$work"
sup_pid="" ngx_pid="" keyd_pid=""

cleanup() {
    local rc=$?
    [[ -n $ngx_pid ]] && kill -QUIT "$ngx_pid" 2>/dev/null || true
    [[ -n $sup_pid ]] && kill -TERM "$sup_pid" 2>/dev/null || true
    [[ -n $keyd_pid ]] && kill -TERM "$keyd_pid" 2>/dev/null || true
    for p in $sup_pid $ngx_pid $keyd_pid; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [[ $rc -ne 0 ]]; then
        echo "---- supervisor log"; tail -30 "$work/supervisor.log" 2>/dev/null || true
        echo "---- keyd log"; tail -20 "$work/keyd.log" 2>/dev/null || true
    fi
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT

port=$(free_port)
base=https://127.0.0.1:$port
keyd_socket=$work/keyd/keyd.sock
start_keyd() {
    # Ready when keyd says so: after a kill the dead keyd's socket file is still there (refusing
    # connections) until the new one renames its listening socket over it.
    local before; before=$(grep -c 'listening on' "$work/keyd.log" 2>/dev/null || true)
    "$keyd_bin" --socket "$keyd_socket" --root-key-file "$work/root.key" --allowed-uid "$(id -u)" \
        --chain-id 31337 --contract 0x5FbDB2315678afecb367f032d93F642f64180aa3 --payers 2 >>"$work/keyd.log" 2>&1 &
    keyd_pid=$!
    for _ in $(seq 100); do
        [[ $(grep -c 'listening on' "$work/keyd.log" 2>/dev/null || true) -gt ${before:-0} && -S $keyd_socket ]] && return
        sleep 0.05
    done
    fail "keyd did not start listening"
}
start_keyd

cat > "$work/sigil.conf" <<CONF
[supervisor]
socket_path = $work/run/fcgi.sock
workers = 3
[keyd]
socket_path = $keyd_socket
request_timeout_ms = 1000
CONF
"$bin/sigil-supervisor" -c "$work/sigil.conf" >"$work/supervisor.log" 2>&1 &
sup_pid=$!
mkdir -p "$work/evidence"
"$src/nginx/render-dev.sh" "$work/nginx" "$port" "$work/run/fcgi.sock" "$work/evidence" >/dev/null
"$NGINX" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>>"$work/nginx-stderr.log" &
ngx_pid=$!

# health: prints "<status> <keyd field> <seconds>"
health() {
    local out code
    out=$(curl -sk --max-time 10 -o "$work/body" -w '%{http_code} %{time_total}' "$base/health" || echo "000 10")
    code=${out% *}
    echo "$code $(node -e 'try{console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).keyd)}catch{console.log("-")}' "$work/body") ${out#* }"
}

up=""
for _ in $(seq 100); do [[ $(health) == "200 ok "* ]] && { up=1; break; }; sleep 0.1; done
[[ -n $up ]] || fail "service did not become healthy with keyd"
pass "health 200 with keyd ok"

kill -KILL "$keyd_pid"; wait "$keyd_pid" 2>/dev/null || true; keyd_pid=""
# Several requests, so every worker (3) meets the dead keyd on its held connection.
for i in $(seq 9); do
    read -r code keyd secs <<<"$(health)"
    [[ $code == 503 && $keyd == unavailable ]] || fail "request $i with keyd down: got $code keyd=$keyd"
    awk -v s="$secs" 'BEGIN { exit !(s < 3.0) }' || fail "request $i took ${secs}s with keyd down (must fail fast)"
done
pass "keyd down: 9 requests answered 503 keyd=unavailable, each under 3 s"

start_keyd
for i in $(seq 9); do
    read -r code keyd secs <<<"$(health)"
    [[ $code == 200 && $keyd == ok ]] || fail "request $i after keyd restart: got $code keyd=$keyd"
done
pass "keyd restarted: workers reconnected, 9 requests answered 200 keyd=ok"
