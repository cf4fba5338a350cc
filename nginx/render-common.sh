# Shared by nginx/render-dev.sh and nginx/render-balancer.sh (sourced, not run): what every
# development nginx prefix needs whatever it serves.

# A self-signed P-256 certificate for 127.0.0.1 in PREFIX/tls, made once (30 days).
ensure_dev_certificate() {
    local prefix=$1
    if [[ ! -s $prefix/tls/cert.pem || ! -s $prefix/tls/key.pem ]]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
            -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
            -keyout "$prefix/tls/key.pem" -out "$prefix/tls/cert.pem" 2>/dev/null
        chmod 600 "$prefix/tls/key.pem"
    fi
}

# Sets user_line (and user_group): nginx started as root runs its workers as an unprivileged user,
# so name it (and let that user into PREFIX); both empty otherwise.
set_user_line() {
    local prefix=$1
    user_line=""
    user_group=""
    if [[ $(id -u) -eq 0 ]]; then
        user_group=$(id -gn nobody 2>/dev/null || echo nogroup)
        user_line="user nobody $user_group;"
        chmod 0755 "$prefix"
    fi
}
