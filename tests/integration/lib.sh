# Shared helpers for the shell integration tests and benchmarks (sourced, never run by itself).

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# A loopback TCP port nobody listens on right now.
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
    done
    fail "no free port"
}

# JSON field (dotted path) from a file, via node (always present: the project's tooling uses it).
jget() { node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); const v=process.argv[2].split(".").reduce((o,k)=>o==null?o:o[k], j); console.log(typeof v==="object"?JSON.stringify(v):String(v))' "$1" "$2"; }
