// keyd's own counters, answered to STATS (keyd/protocol.md) so /metrics can export them: requests
// and failures by kind, the time keyd spent answering (a fixed-bucket histogram), connections,
// uptime and where the root key came from. Plain counters: keyd's loop is single-threaded.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "common/metrics.h"
#include "keyd/protocol.h"

namespace sigil::keyd {

class StatsRecorder {
public:
    explicit StatsRecorder(KeySourceKind key_source)
        : m_key_source(key_source), m_started(std::chrono::steady_clock::now()) {}

    // One answered request: its type byte (payload[0]), whether the reply was not a FAILURE, and how
    // long keyd took to answer it.
    void Record(std::uint8_t type, bool ok, std::int64_t micros);
    // A connection closed at accept (uid not allowed, or the connection limit).
    void ConnectionRefused() { ++m_connections_refused; }

    KeydStats Snapshot(std::size_t connections_open) const;

private:
    KeySourceKind m_key_source;
    std::chrono::steady_clock::time_point m_started;
    std::array<std::uint64_t, STATS_KINDS> m_requests{};
    std::array<std::uint64_t, STATS_KINDS> m_failures{};
    common::SharedHistogram m_latency{};
    std::uint64_t m_connections_refused = 0;
};

}  // namespace sigil::keyd
