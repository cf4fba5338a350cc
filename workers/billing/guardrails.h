// Key guardrails (issue 26): what an account's admin sets on a usage key so it is safe to hand out
// (rates per key and per client address, runs in flight, a spend cap over a rolling window, allowed
// Origins), and the arithmetic the ledger's statements use to enforce them. They live in the ledger's
// database and are checked in the transaction that holds a run's price (Ledger::AdmitRun), so one
// PostgreSQL shared by a cluster makes every limit exact across its instances.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sigil::workers::billing {

using Cents = std::int64_t;

// A token bucket's tokens are counted in millionths: with the rate in thousandths of a request per
// second, one millisecond refills exactly `rate_milli` micro-tokens, so refills are exact integers
// however often the bucket is taken from (no rounding that a fast caller could starve).
inline constexpr std::int64_t MICRO_TOKENS = 1'000'000;
// Bounds that keep every product of the arithmetic far inside int64.
inline constexpr std::int64_t MAX_RATE_MILLI = 10'000'000;  // 10,000 requests per second
inline constexpr std::int64_t MIN_RATE_MILLI = 1;           // one request per 1,000 s
inline constexpr std::int64_t MAX_BURST = 100'000;
inline constexpr std::int64_t MAX_REFILL_MS = 100'000'000'000;  // elapsed time counted at most (~3 years)
inline constexpr std::int64_t MAX_RUNS_IN_FLIGHT = 100'000;
inline constexpr std::int64_t MAX_WINDOW_SECONDS = 366LL * 24 * 3600;
inline constexpr std::size_t MAX_ORIGINS = 32;
inline constexpr std::size_t MAX_ORIGIN_BYTES = 200;

// A usage key's guardrails as stored. A field at 0 (or an empty list) is not set.
struct KeyGuardrails {
    std::string key;      // the usage key's hash, 0x + 64 lower-case hex
    std::string account;  // its account's hash, same form: only that account's admin reads or changes them
    std::int64_t rate_milli = 0;          // runs per second x 1000 for the key as a whole
    std::int64_t burst = 0;               // the bucket's size: runs at once after a quiet time
    std::int64_t address_rate_milli = 0;  // the same for each client address
    std::int64_t address_burst = 0;
    // Runs in flight at once; -1: not set ([billing] max_concurrent_runs_per_key applies), 0: no cap.
    std::int64_t max_runs_in_flight = -1;
    Cents window_cap_cents = 0;        // what runs started within the last window_seconds may cost
    std::int64_t window_seconds = 0;
    std::vector<std::string> allowed_origins;  // exact "scheme://host[:port]"; empty: any (and no CORS)
    std::int64_t updated_ms = 0;
};

// What a bucket answered: whether the token was granted, and the micro-tokens left.
struct BucketTake {
    bool granted = false;
    std::int64_t tokens = 0;
};

// The bucket after `elapsed_ms` at `rate_milli` (capped at `burst` tokens), before taking one: the
// formula the stores' single UPSERT statement computes, here for tests and for Retry-After.
std::int64_t RefilledTokens(std::int64_t tokens, std::int64_t elapsed_ms, std::int64_t rate_milli, std::int64_t burst);
// Whole seconds until a bucket holding `tokens` micro-tokens has one token again (at least 1).
int RetryAfterSeconds(std::int64_t tokens, std::int64_t rate_milli);
// The first millisecond a window of `window_seconds` ending at `now_ms` counts (runs started at or
// after it).
std::int64_t WindowStartMs(std::int64_t now_ms, std::int64_t window_seconds);

// "https://app.example" from an Origin header or a configured entry: scheme http or https, a host,
// an optional port, nothing else (no path, no user info); lower-cased, default ports dropped, so the
// comparison is exact. Errors: InvalidInput "invalid_origin".
common::Result<std::string> CanonicalOrigin(const std::string& origin);
// Whether `origin` (an Origin header as sent) is one of `allowed` (canonical entries).
bool OriginAllowed(const std::vector<std::string>& allowed, const std::string& origin);

// Checks every bound above. Errors: InvalidInput "invalid_guardrails" naming the field.
common::Status ValidateGuardrails(const KeyGuardrails& g);

// Origins as stored in one text column (newline-separated; an origin holds no newline) and back.
std::string JoinOrigins(const std::vector<std::string>& origins);
std::vector<std::string> SplitOrigins(const std::string& text);

// A run asking to start (Ledger::AdmitRun): the caller's key, its address, and the hold billing wants.
struct RunGate {
    std::string key;             // the caller's key hash (the master key's too: the in-flight default binds it)
    bool usage_key = false;      // only a usage key's own guardrails are read
    std::string client_address;  // REMOTE_ADDR as nginx passed it ("" skips the per-address rate)
    std::string run_id;          // the request id (1..128 printable bytes)
    std::int64_t default_in_flight = 0;  // [billing] max_concurrent_runs_per_key; 0 = no cap
    std::int64_t lease_ms = 0;           // a run row left by a crashed worker stops counting after this
    // The hold, when billing is on (customer not empty): as Ledger::ChargeUpTo, or a hold of 0 when
    // `unit` is 0 (free runs, kept so the ledger shows each run).
    std::string customer;
    Cents unit = 0;
    std::int64_t max_units = 0;
    std::string reason;
    std::string spender;
    Cents spender_limit = 0;
};

// What a refused admission says besides its error: when a rate limit's bucket has a token again.
struct RunRefusal {
    int retry_after_s = 0;  // 0: not a rate limit
};

// An admitted run: what to give back when it ends (Ledger::EndRun).
struct RunPass {
    std::string run_id;
    bool counted = false;                 // a row in the runs-in-flight table to delete
    std::optional<std::int64_t> hold_id;  // the ledger entry of the hold (billing on)
    std::int64_t units = 0;               // held units
    bool windowed = false;                // the hold counts in the key's rolling window
};

}  // namespace sigil::workers::billing
