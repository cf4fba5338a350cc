#!/usr/bin/env bash
# Renders a private nginx load balancer for several Sigil instances under PREFIX: a self-signed
# certificate for 127.0.0.1 and PREFIX/nginx.conf from nginx/balancer.conf.template, listening on
# 127.0.0.1:PORT and passing every request to the instances' own nginx (HTTPS on 127.0.0.1:PORT_i).
# Start it with: nginx -p PREFIX -c PREFIX/nginx.conf -g 'daemon off;'
# Usage: render-balancer.sh PREFIX PORT INSTANCE_PORT... 
# SIGIL_LB_FAIL_TIMEOUT: seconds an unreachable instance is left out (default 5; max_fails is 1).
# SIGIL_LB_READ_TIMEOUT: seconds the balancer waits for an instance's answer (default 75).
set -euo pipefail

if [[ $# -lt 3 ]]; then
    echo "usage: $0 PREFIX PORT INSTANCE_PORT..." >&2
    exit 64
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=nginx/render-common.sh
. "$here/render-common.sh"
prefix=$(realpath -m "$1")
port=$2
shift 2
fail_timeout=${SIGIL_LB_FAIL_TIMEOUT:-5}
read_timeout=${SIGIL_LB_READ_TIMEOUT:-75}
max_body=${SIGIL_LB_MAX_BODY_BYTES:-1048576}
[[ $prefix =~ ^[A-Za-z0-9_./-]+$ ]] || { echo "unsupported characters in path: $prefix" >&2; exit 64; }
for p in "$port" "$@"; do
    [[ $p =~ ^[0-9]+$ && $p -ge 1 && $p -le 65535 ]] || { echo "bad port: $p" >&2; exit 64; }
done
[[ $fail_timeout =~ ^[0-9]+$ && $read_timeout =~ ^[0-9]+$ && $max_body =~ ^[0-9]+$ ]] || {
    echo "bad SIGIL_LB_FAIL_TIMEOUT, SIGIL_LB_READ_TIMEOUT or SIGIL_LB_MAX_BODY_BYTES" >&2; exit 64; }

mkdir -p "$prefix"/{logs,tmp,tls}
ensure_dev_certificate "$prefix"
set_user_line "$prefix"
servers=""
for p in "$@"; do
    servers+="        server 127.0.0.1:$p max_fails=1 fail_timeout=${fail_timeout}s;\\n"
done
sed -e "s|@PREFIX@|$prefix|g" -e "s|@USER_LINE@|$user_line|g" -e "s|@LISTEN@|127.0.0.1:$port|g" \
    -e "s|@CERT@|$prefix/tls/cert.pem|g" -e "s|@KEY@|$prefix/tls/key.pem|g" \
    -e "s|@MAX_BODY_BYTES@|$max_body|g" -e "s|@READ_TIMEOUT@|$read_timeout|g" -e "s|^@SERVERS@$|${servers%\\n}|" \
    "$here/balancer.conf.template" > "$prefix/nginx.conf"
if grep -q '@[A-Z_]*@' "$prefix/nginx.conf"; then
    echo "unrendered placeholder left in $prefix/nginx.conf" >&2
    exit 1
fi
echo "$prefix/nginx.conf"
