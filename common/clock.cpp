#include "common/clock.h"

#include <ctime>

namespace sigil::common {

std::int64_t MonotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t MonotonicUs() { return MonotonicNs() / 1000; }

std::int64_t MonotonicMs() { return MonotonicNs() / 1000000; }

}  // namespace sigil::common
