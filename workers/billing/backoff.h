// Pacing for reaching a ledger database that did not answer: after a failed attempt, calls fail at
// once until the next attempt is due (500 ms, doubling to 8 s while failures go on), so a server
// that does not answer costs one connect timeout per interval instead of one per billed request.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/result.h"

namespace sigil::workers::billing {

class ConnectBackoff {
public:
    using Clock = std::chrono::steady_clock;

    // Unavailable "ledger_unavailable" (saying when the next attempt is) while one is not due yet.
    common::Status Admit(Clock::time_point now = Clock::now()) const {
        if (now >= m_next) return common::Success();
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(m_next - now).count();
        return common::MakeError(common::ErrorKind::Unavailable, "ledger_unavailable",
                                 "the ledger database was unreachable; next attempt in " + std::to_string(wait) + " ms");
    }
    void Record(bool connected, Clock::time_point now = Clock::now()) {
        if (connected) {
            m_delay = std::chrono::milliseconds(0);
            return;
        }
        m_delay = std::clamp(m_delay * 2, std::chrono::milliseconds(500), std::chrono::milliseconds(8000));
        m_next = now + m_delay;
    }

private:
    Clock::time_point m_next{};
    std::chrono::milliseconds m_delay{0};
};

}  // namespace sigil::workers::billing
