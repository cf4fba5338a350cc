#!/usr/bin/env bash
# Renders a private development nginx for Sigil under PREFIX: a self-signed EC P-256 certificate
# for 127.0.0.1 and PREFIX/nginx.conf from nginx/sigil.conf.template, listening on 127.0.0.1:PORT.
# Every path nginx uses (pid, logs, temp dirs) is inside PREFIX. Start it with:
#   nginx -p PREFIX -c PREFIX/nginx.conf -g 'daemon off;'
# Usage: render-dev.sh PREFIX PORT SOCKET EVIDENCE_DIR [MAX_BODY_BYTES] [READ_TIMEOUT_S] [NODE_MODULES]
# SIGIL_DEV_GATEWAY="PORT:DIR" adds a plain-HTTP IPFS gateway on 127.0.0.1:PORT serving DIR at /ipfs/.
# SIGIL_MINT_RATE / SIGIL_MINT_BURST: nginx's limit on new_account and the *_with_signature flows per
# client address (development defaults 20r/s, burst 100, generous for the test suites; production: 1r/s, 20).
# SIGIL_MAX_INFLIGHT: requests nginx passes to the workers at once, the rest get 503 overloaded; must
# equal [supervisor] max_workers (default 256). SIGIL_FCGI_KEEPALIVE: idle kept FastCGI connections per
# nginx worker (default: min(SIGIL_MAX_INFLIGHT, 32)).
# SIGIL_OPERATOR_LISTEN (e.g. 127.0.0.1:9145): nginx's operator listener, plain HTTP, serving /metrics
# for Prometheus; unset = none.
# NODE_MODULES (default: node_modules next to this script's parent directory, i.e. the repository's)
# must hold swagger-ui-dist (npm ci); /core/v1/swagger-ui/ serves it with nginx/swagger-ui/index.html.
# /dashboard/ serves clients/dashboard with the SDK (clients/js/src, abi) and NODE_MODULES/ethers/dist/ethers.min.js and NODE_MODULES/yaml/browser/dist.
set -euo pipefail

if [[ $# -lt 4 || $# -gt 7 ]]; then
    echo "usage: $0 PREFIX PORT SOCKET EVIDENCE_DIR [MAX_BODY_BYTES=1048576] [READ_TIMEOUT_S=75] [NODE_MODULES]" >&2
    exit 64
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=nginx/render-common.sh
. "$here/render-common.sh"
prefix=$(realpath -m "$1")
port=$2
socket=$(realpath -m "$3")
evidence=$(realpath -m "$4")
max_body=${5:-1048576}
read_timeout=${6:-75}
swagger_dist=$(realpath -m "${7:-$here/../node_modules}/swagger-ui-dist")
swagger_page=$here/swagger-ui
dashboard_dir=$(realpath -m "$here/../clients/dashboard")
sdk_dir=$(realpath -m "$here/../clients/js")
ethers_dist=$(realpath -m "${7:-$here/../node_modules}/ethers/dist")
yaml_dist=$(realpath -m "${7:-$here/../node_modules}/yaml/browser/dist")
mint_rate=${SIGIL_MINT_RATE:-20r/s}
mint_burst=${SIGIL_MINT_BURST:-100}
[[ $mint_rate =~ ^[0-9]+r/[sm]$ && $mint_burst =~ ^[0-9]+$ ]] || { echo "bad SIGIL_MINT_RATE or SIGIL_MINT_BURST" >&2; exit 64; }
max_inflight=${SIGIL_MAX_INFLIGHT:-256}
[[ $max_inflight =~ ^[0-9]+$ && $max_inflight -ge 1 ]] || { echo "bad SIGIL_MAX_INFLIGHT" >&2; exit 64; }
keepalive=${SIGIL_FCGI_KEEPALIVE:-$(( max_inflight > 32 ? 32 : max_inflight ))}
[[ $keepalive =~ ^[0-9]+$ && $keepalive -ge 1 ]] || { echo "bad SIGIL_FCGI_KEEPALIVE" >&2; exit 64; }

[[ $port =~ ^[0-9]+$ && $port -ge 1 && $port -le 65535 ]] || { echo "bad PORT: $port" >&2; exit 64; }
operator_listen=${SIGIL_OPERATOR_LISTEN:-}
if [[ -n $operator_listen ]]; then
    [[ $operator_listen =~ ^[0-9.]+:[0-9]+$|^\[[0-9a-fA-F:]+\]:[0-9]+$ ]] || { echo "bad SIGIL_OPERATOR_LISTEN: $operator_listen" >&2; exit 64; }
    operator_sed=(-e 's|^#operator# ||' -e "s|@OPERATOR_LISTEN@|$operator_listen|g")
else
    operator_sed=(-e '/^#operator# /d')
fi
[[ $max_body =~ ^[0-9]+$ && $read_timeout =~ ^[0-9]+$ ]] || { echo "bad MAX_BODY_BYTES or READ_TIMEOUT_S" >&2; exit 64; }
for p in "$prefix" "$socket" "$evidence" "$swagger_dist" "$swagger_page" "$dashboard_dir" "$sdk_dir" "$ethers_dist" "$yaml_dist"; do
    # Paths go into nginx.conf verbatim: refuse anything that could break out of a directive.
    [[ $p =~ ^[A-Za-z0-9_./-]+$ ]] || { echo "unsupported characters in path: $p" >&2; exit 64; }
done

mkdir -p "$prefix"/{logs,tmp,tls} "$evidence" "$(dirname "$socket")"
if [[ ! -f $swagger_dist/swagger-ui-bundle.js ]]; then
    # Not fatal: the API works without its documentation page, which then answers 404.
    echo "warning: $swagger_dist has no swagger-ui-bundle.js (run npm ci); /core/v1/swagger-ui/ will 404" >&2
fi
ensure_dev_certificate "$prefix"

set_user_line "$prefix"
if [[ $(id -u) -eq 0 ]]; then
    # The workers' unprivileged user must reach the socket and the evidence files (DESIGN section 8 trap).
    chmod -R a+rX "$evidence"
    for p in "$(dirname "$socket")" "$evidence" "$swagger_dist" "$swagger_page" "$dashboard_dir" "$sdk_dir" "$ethers_dist" "$yaml_dist"; do
        if ! setpriv --reuid=nobody --regid="$user_group" --clear-groups test -x "$p" 2>/dev/null; then
            echo "warning: user nobody cannot reach $p; nginx workers will fail on it (check every parent directory's x bit)" >&2
        fi
    done
fi

sed -e "s|@PREFIX@|$prefix|g" -e "s|@USER_LINE@|$user_line|g" -e "s|@LISTEN@|127.0.0.1:$port|g" \
    -e "s|@CERT@|$prefix/tls/cert.pem|g" -e "s|@KEY@|$prefix/tls/key.pem|g" -e "s|@SOCKET@|$socket|g" \
    -e "s|@EVIDENCE_DIR@|$evidence|g" -e "s|@MAX_BODY_BYTES@|$max_body|g" -e "s|@READ_TIMEOUT@|$read_timeout|g" \
    -e "s|@SWAGGER_UI_DIST@|$swagger_dist|g" -e "s|@SWAGGER_UI_PAGE@|$swagger_page|g" \
    -e "s|@DASHBOARD_DIR@|$dashboard_dir|g" -e "s|@SDK_DIR@|$sdk_dir|g" -e "s|@ETHERS_DIST@|$ethers_dist|g" -e "s|@YAML_DIST@|$yaml_dist|g" \
    -e "s|@MINT_RATE@|$mint_rate|g" -e "s|@MINT_BURST@|$mint_burst|g" \
    -e "s|@MAX_INFLIGHT@|$max_inflight|g" -e "s|@KEEPALIVE@|$keepalive|g" "${operator_sed[@]}" \
    "$here/sigil.conf.template" > "$prefix/nginx.conf"
# Development IPFS gateway (SIGIL_DEV_GATEWAY="PORT:DIR"): plain HTTP on loopback serving
# DIR/<CID> at /ipfs/<CID>, where scripts/ipfs-add puts files. Workers verify every byte
# against the CID, so this needs no TLS; production lists real gateways in [actions].
if [[ -n ${SIGIL_DEV_GATEWAY:-} ]]; then
    gw_port=${SIGIL_DEV_GATEWAY%%:*}
    gw_dir=$(realpath -m "${SIGIL_DEV_GATEWAY#*:}")
    [[ $gw_port =~ ^[0-9]+$ && $gw_dir =~ ^[A-Za-z0-9_./-]+$ ]] || { echo "bad SIGIL_DEV_GATEWAY: $SIGIL_DEV_GATEWAY" >&2; exit 64; }
    mkdir -p "$gw_dir"
    [[ $(id -u) -eq 0 ]] && chmod a+rx "$gw_dir"
    block="    server {\n        listen 127.0.0.1:$gw_port;\n        server_name _;\n        location /ipfs/ {\n            alias $gw_dir/;\n            default_type application/octet-stream;\n        }\n        location / { return 404; }\n    }"
    # The template's last line closes the http block: insert the server before it.
    sed -i '$d' "$prefix/nginx.conf"
    printf '%b\n}\n' "$block" >> "$prefix/nginx.conf"
fi
if grep -q '@[A-Z_]*@' "$prefix/nginx.conf"; then
    echo "unrendered placeholder left in $prefix/nginx.conf" >&2
    exit 1
fi
echo "$prefix/nginx.conf"
