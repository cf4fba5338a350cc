// The monotonic clock (CLOCK_MONOTONIC) as plain integers: shared by every process on the machine
// and immune to wall-clock steps, so deadlines and durations survive NTP and a value one process
// stores (the scoreboard's request start) means the same to another.
#pragma once

#include <cstdint>

namespace sigil::common {

// Time since an unspecified start (boot), in milliseconds, microseconds or nanoseconds.
std::int64_t MonotonicMs();
std::int64_t MonotonicUs();
std::int64_t MonotonicNs();

}  // namespace sigil::common
