// Result<T>: expected failures (bad input, chain revert, limit hit) as values, never exceptions.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sigil::common {

// Error categories. The HTTP layer maps each to one status in one place.
enum class ErrorKind {
    InvalidInput,    // 400: malformed id, hex, CID, address, field
    Unauthenticated, // 401: missing, unknown, revoked or expired key
    PaymentRequired, // 402
    Forbidden,       // 403: scope missing or owner-only
    NotFound,        // 404
    Conflict,        // 409
    TooLarge,        // 413
    MalformedJson,   // 422
    Overloaded,      // 429
    Internal,        // 500: our bug, never a client mistake
    Unavailable,     // 502: chain or IPFS unreachable, keyd down
    Timeout,         // 504
    Suspended,       // 503: a dependency is known to be failing; refused at once, retry shortly
};

struct Error {
    ErrorKind kind = ErrorKind::Internal;
    std::string code;     // snake_case machine code, e.g. "invalid_hex"
    std::string message;  // human text; never contains secrets
    // A write that broadcast its transaction and then failed (its receipt did not arrive in time,
    // the node went away): the transaction's 0x-hash, so the outcome can still be followed up.
    // Empty otherwise.
    std::string tx_hash;
};

inline Error MakeError(ErrorKind kind, std::string code, std::string message) {
    return Error{kind, std::move(code), std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

// Result<void>: success carries nothing.
struct Ok {};
using Status = Result<Ok>;

inline Status Success() { return Ok{}; }

}  // namespace sigil::common

// Declares `var` as the Result of `expr` and returns its error from the enclosing function when it
// failed; afterwards `*var` / `var->` is the value. A statement at block level only.
#define SIGIL_TRY(var, expr) \
    auto var = (expr);       \
    if (!var.ok()) return var.error()

// Propagate an error from an expression returning Result<...>; evaluates to nothing.
#define SIGIL_TRY_STATUS(expr)                       \
    do {                                             \
        auto sigil_try_r_ = (expr);                  \
        if (!sigil_try_r_.ok()) return sigil_try_r_.error(); \
    } while (0)
