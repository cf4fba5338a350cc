#!/usr/bin/env bash
# scripts/start as a user runs it, twice on the same SIGIL_HOME: the second start keeps the chain
# (the account, its API key and its group work again) because the root key is the same: by default
# keyd gets it from the simulated TEE key service (GetKey), deterministic for the app id, and no key
# file is written.
# Arguments: <build dir> <source dir>.
set -euo pipefail
build=$1 src=$2
source "$src/tests/integration/lib.sh"
command -v nginx >/dev/null || { echo "skip: no nginx"; exit 77; }

home=$(mktemp -d /tmp/sigil-start-test.XXXXXX)
port=$(free_port) gateway_port=$(free_port) metrics_port=$(free_port)
start_pid=""
cleanup() {
    [[ -n $start_pid ]] && kill -TERM "$start_pid" 2>/dev/null && wait "$start_pid" 2>/dev/null
    rm -rf "$home"
}
trap cleanup EXIT

url="https://127.0.0.1:$port"
start_stack() {
    SIGIL_HOME=$home SIGIL_PORT=$port SIGIL_GATEWAY_PORT=$gateway_port SIGIL_METRICS_PORT=$metrics_port SIGIL_WORKERS=1 SIGIL_BUILD_DIR=$build \
        "$src/scripts/start" >"$home/start.out" 2>&1 </dev/null &
    start_pid=$!
    for _ in $(seq 1200); do
        grep -q "Sigil is up" "$home/start.out" 2>/dev/null && return
        kill -0 "$start_pid" 2>/dev/null || { cat "$home/start.out"; fail "scripts/start exited"; }
        sleep 0.1
    done
    cat "$home/start.out"; fail "scripts/start did not come up in 120 s"
}
stop_stack() {
    kill -TERM "$start_pid"
    wait "$start_pid" || true
    start_pid=""
    [[ -s $home/chain/anvil-state.json ]] || fail "no chain state written at stop"
}
api() { # path body [key] -> body on stdout, status in $home/status
    curl -sk -o "$home/body" -w '%{http_code}' -X POST "$url/core/v1/$1" -H 'Content-Type: application/json' \
        ${3:+-H "X-Api-Key: $3"} -d "$2" >"$home/status"
    cat "$home/body"
}

start_stack
pass "first start"
grep -q 'root key from TEE key service (dstack GetKey) at ' "$home/logs/keyd.log" || fail "keyd did not use the TEE key service: $(cat "$home/logs/keyd.log")"
[[ ! -e $home/keyd/root.key ]] || fail "a root key file was written with the TEE key source"
grep -q 'GetKey path "sigil/root/v1"' "$home/logs/tee-sim.log" || fail "the simulator logged no GetKey"
pass "the root key came from the simulated TEE key service, nothing on disk"
metrics=$(curl -s "http://127.0.0.1:$metrics_port/metrics")
grep -q '^sigil_build_info{' <<<"$metrics" || fail "no /metrics on the operator listener: ${metrics:0:300}"
grep -q '^sigil_evidence_present 1$' <<<"$metrics" || fail "/metrics does not see the evidence set"
pass "/metrics on the operator listener"
key=$(api new_account '{"account_name":"keep","account_description":"survives a restart"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')
[[ $(cat "$home/status") == 200 ]] || fail "new_account: $(cat "$home/body")"
api add_group '{"group_name":"kept","group_description":"d","pkp_ids_permitted":[],"cid_hashes_permitted":[]}' "$key" >/dev/null
[[ $(cat "$home/status") == 200 ]] || fail "add_group: $(cat "$home/body")"
contract=$(jget "$home/chain.json" contract_address)
stop_stack
pass "stopped; chain state on disk"

start_stack
[[ $(jget "$home/chain.json" contract_address) == "$contract" ]] || fail "a new contract was deployed on restart"
groups=$(curl -sk -w '\n%{http_code}' "$url/core/v1/list_groups?page_number=0&page_size=10" -H "X-Api-Key: $key")
[[ $(tail -n1 <<<"$groups") == 200 ]] || fail "list_groups after restart: $groups"
grep -q '"kept"' <<<"$groups" || fail "the group is gone after restart: $groups"
pass "second start kept the contract, the account, its API key and its group"
