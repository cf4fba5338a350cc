#!/usr/bin/env bash
# HTTP throughput of the running service: sigil-supervisor + a private nginx over TLS on loopback,
# measured with wrk. Compares nginx serving a static evidence file with the dynamic path
# nginx -> FastCGI -> sigil-worker (GET /core/v1/version), then measures the dynamic path at
# concurrency 1 for single-request latency. Prints requests/s, p50, p99, the dynamic/static ratio
# (goal >= 0.5) and one machine-readable summary line. Everything started here is stopped on exit.
# Usage: bench_http.sh BUILD_DIR [DURATION_S=10] [CONNECTIONS=16] [WORKERS=4]
# Environment (for experiments; defaults are the shipped configuration):
#   SIGIL_BENCH_MAX_REQUESTS   [supervisor] max_requests (default 100000, the shipped default)
#   SIGIL_BENCH_ROUNDS         alternating static/dynamic rounds; the ratio is their median (default 5)
#   SIGIL_BENCH_NGINX_SED      a sed script applied to the rendered nginx.conf before start
#   SIGIL_LOG_LEVEL            passed to supervisor and workers (info logs one line per request)
set -euo pipefail
# shellcheck source=../integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

if [[ $# -lt 1 || $# -gt 4 ]]; then
    echo "usage: $0 BUILD_DIR [DURATION_S=10] [CONNECTIONS=16] [WORKERS=4]" >&2
    exit 64
fi
build=$(realpath "$1")
duration=${2:-10}
connections=${3:-16}
workers=${4:-4}
max_requests=${SIGIL_BENCH_MAX_REQUESTS:-100000}
rounds=${SIGIL_BENCH_ROUNDS:-5}
for n in "$duration" "$connections" "$workers" "$max_requests" "$rounds"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "DURATION_S, CONNECTIONS, WORKERS and max_requests must be positive integers" >&2; exit 64; }
done
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$build/bin
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
WRK=$(command -v wrk || true)
[[ -x $NGINX ]] || { echo "SKIP: nginx not installed"; exit 77; }
[[ -n $WRK ]] || { echo "SKIP: wrk not installed (apt-get install wrk)"; exit 77; }
[[ -x $bin/sigil-supervisor && -x $bin/sigil-worker ]] ||
    { echo "FAIL: build sigil-supervisor and sigil-worker in $build first"; exit 1; }

work=$(mktemp -d /tmp/sigil-bench-http-XXXXXX)
chmod 755 "$work"  # nginx workers run as nobody when we are root: they must reach the socket
sup_pid=""
ngx_pid=""
wrk_pid=""

cleanup() {
    local rc=$?
    [[ -n $wrk_pid ]] && kill -TERM "$wrk_pid" 2>/dev/null || true
    [[ -n $ngx_pid ]] && kill -QUIT "$ngx_pid" 2>/dev/null || true
    local left=""
    if [[ -n $sup_pid ]] && kill -0 "$sup_pid" 2>/dev/null; then
        left=$(pgrep -P "$sup_pid" || true)
        kill -TERM "$sup_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$sup_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$sup_pid" 2>/dev/null || true
    fi
    for w in $left; do kill -KILL "$w" 2>/dev/null || true; done
    if [[ -n $ngx_pid ]]; then
        for _ in $(seq 20); do kill -0 "$ngx_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$ngx_pid" 2>/dev/null || true
    fi
    wait 2>/dev/null || true
    if [[ $rc -ne 0 ]]; then
        echo "---- supervisor log"; tail -20 "$work/supervisor.log" 2>/dev/null || true
        echo "---- nginx error log"; tail -20 "$work/nginx/logs/error.log" 2>/dev/null || true
    fi
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM



loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

port=$(free_port)
base=https://127.0.0.1:$port
socket=$work/run/fcgi.sock
mkdir -p "$work/evidence"
# 64 bytes of JSON, about the size of the version answer, so both paths move similar payloads.
printf '{"service":"sigil","bench":"static","pad":"%s"}\n' "$(printf 'x%.0s' $(seq 18))" >"$work/evidence/bench.json"
[[ $(stat -c %s "$work/evidence/bench.json") -eq 64 ]] || fail "static file is not 64 bytes"

cat >"$work/sigil.conf" <<CONF
[supervisor]
socket_path = $socket
workers = $workers
max_requests = $max_requests
request_hard_timeout_s = 30
graceful_stop_timeout_s = 5
CONF

"$bin/sigil-supervisor" -c "$work/sigil.conf" >"$work/supervisor.log" 2>&1 &
sup_pid=$!
"$src/nginx/render-dev.sh" "$work/nginx" "$port" "$socket" "$work/evidence" >/dev/null
if [[ -n ${SIGIL_BENCH_NGINX_SED:-} ]]; then
    sed -i -e "$SIGIL_BENCH_NGINX_SED" "$work/nginx/nginx.conf"
fi
"$NGINX" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' 2>>"$work/nginx-stderr.log" &
ngx_pid=$!

static_url=$base/evidences/bench.json
dynamic_url=$base/core/v1/version
ready=""
for _ in $(seq 100); do
    kill -0 "$sup_pid" 2>/dev/null || fail "supervisor exited at start"
    kill -0 "$ngx_pid" 2>/dev/null || fail "nginx exited at start: $(cat "$work/nginx-stderr.log")"
    if [[ $(curl -sk --max-time 2 -o /dev/null -w '%{http_code}' "$dynamic_url" || true) == 200 &&
          $(curl -sk --max-time 2 -o /dev/null -w '%{http_code}' "$static_url" || true) == 200 ]]; then
        ready=1
        break
    fi
    sleep 0.1
done
[[ -n $ready ]] || fail "service not ready after 10 s"
dynamic_bytes=$(curl -sk --max-time 2 "$dynamic_url" | wc -c)

# run_wrk NAME THREADS CONNS SECONDS URL: runs wrk (bounded by `timeout`), keeps its output in
# $work/NAME.txt, refuses a run with socket errors or non-2xx answers.
run_wrk() {
    local name=$1 threads=$2 conns=$3 secs=$4 url=$5
    # In the background so a SIGTERM to this script runs the cleanup at once, not after wrk.
    timeout -k 5 $((secs + 30)) "$WRK" --latency -t"$threads" -c"$conns" -d"${secs}s" "$url" >"$work/$name.txt" 2>&1 &
    wrk_pid=$!
    wait "$wrk_pid" || fail "wrk $name failed: $(cat "$work/$name.txt")"
    wrk_pid=""
    grep -q '^Requests/sec:' "$work/$name.txt" || fail "wrk $name printed no rate: $(cat "$work/$name.txt")"
    if grep -qE 'Non-2xx|Socket errors' "$work/$name.txt"; then
        fail "wrk $name saw errors: $(grep -E 'Non-2xx|Socket errors' "$work/$name.txt")"
    fi
}
# field NAME KEY: requests/s ("rps") or a latency percentile ("50%", "99%") in ms from NAME.txt.
field() {
    local file=$work/$1.txt
    if [[ $2 == rps ]]; then
        awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$file"
    else
        awk -v k="$2" '$1 == k {
            v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
            if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000;
            printf "%.3f", v }' "$file"
    fi
}

threads=2
if (( connections < threads )); then threads=$connections; fi
load_start=$(loadavg)
warm=$(( duration < 3 ? duration : 3 ))
# Warm-up: TLS session cache, nginx's open-file paths, every worker's first-request allocations.
run_wrk warm_static "$threads" "$connections" "$warm" "$static_url"
run_wrk warm_dynamic "$threads" "$connections" "$warm" "$dynamic_url"

# Static and dynamic alternate for ROUNDS rounds, and the ratio is the median of each round's
# ratio: this shared 2-core machine's speed drifts by 20-30% within a minute (other tenants), so
# one static run followed by one dynamic run compared two different machines.
round_ratios=()
for ((r = 1; r <= rounds; r++)); do
    run_wrk "static_$r" "$threads" "$connections" "$duration" "$static_url"
    run_wrk "dynamic_$r" "$threads" "$connections" "$duration" "$dynamic_url"
    round_ratios+=("$(awk -v d="$(field "dynamic_$r" rps)" -v s="$(field "static_$r" rps)" 'BEGIN { printf "%.3f", (s > 0 ? d / s : 0) }')")
done
run_wrk dynamic_c1 1 1 "$duration" "$dynamic_url"
load_end=$(loadavg)

kill -0 "$sup_pid" 2>/dev/null || fail "supervisor died during the run"
kill -0 "$ngx_pid" 2>/dev/null || fail "nginx died during the run"

# The round with the median ratio stands for the run (its rates and latencies are printed).
median_round=$(for ((r = 1; r <= rounds; r++)); do echo "${round_ratios[r-1]} $r"; done | sort -n | awk -v m=$(( (rounds + 1) / 2 )) 'NR == m {print $2}')
cp "$work/static_$median_round.txt" "$work/static.txt"
cp "$work/dynamic_$median_round.txt" "$work/dynamic.txt"
s_rps=$(field static rps); d_rps=$(field dynamic rps); c1_rps=$(field dynamic_c1 rps)
ratio=$(awk -v x="${round_ratios[median_round-1]}" 'BEGIN { printf "%.2f", x }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.5 ? "meets" : "below") }')

echo "HTTP benchmark: supervisor with $workers workers (max_requests $max_requests), nginx over TLS,"
echo "wrk -t$threads -c$connections -d${duration}s; static file 64 B, dynamic answer $dynamic_bytes B"
printf '%-34s %12s %10s %10s\n' "endpoint" "requests/s" "p50 ms" "p99 ms"
printf '%-34s %12s %10s %10s\n' "static  /evidences/bench.json" "$s_rps" "$(field static 50%)" "$(field static 99%)"
printf '%-34s %12s %10s %10s\n' "dynamic /core/v1/version" "$d_rps" "$(field dynamic 50%)" "$(field dynamic 99%)"
printf '%-34s %12s %10s %10s\n' "dynamic /core/v1/version, c=1" "$c1_rps" "$(field dynamic_c1 50%)" "$(field dynamic_c1 99%)"
echo "ratio dynamic/static: $ratio, the median of $rounds alternating rounds (${round_ratios[*]}) ($verdict the goal of 0.5)"
echo "summary nproc=$(nproc) load_start=\"$load_start\" load_end=\"$load_end\" workers=$workers" \
     "connections=$connections duration_s=$duration rounds=$rounds round_ratios=$(IFS=,; echo "${round_ratios[*]}") static_rps=$s_rps dynamic_rps=$d_rps ratio=$ratio" \
     "static_p99_ms=$(field static 99%) dynamic_p99_ms=$(field dynamic 99%) c1_rps=$c1_rps c1_p50_ms=$(field dynamic_c1 50%)"
