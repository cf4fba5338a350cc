#include "keyd/stats.h"

namespace sigil::keyd {

void StatsRecorder::Record(std::uint8_t type, bool ok, std::int64_t micros) {
    const std::size_t kind = StatsKindOf(type);
    ++m_requests[kind];
    if (!ok) ++m_failures[kind];
    m_latency.Observe(micros);
}

KeydStats StatsRecorder::Snapshot(std::size_t connections_open) const {
    KeydStats s;
    s.uptime_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - m_started).count());
    s.key_source = m_key_source;
    s.requests = m_requests;
    s.failures = m_failures;
    for (std::size_t i = 0; i < STATS_LATENCY_BUCKETS; ++i) s.latency_buckets[i] = m_latency.buckets[i].load(std::memory_order_relaxed);
    s.latency_sum_us = m_latency.sum_us.load(std::memory_order_relaxed);
    s.latency_count = m_latency.count.load(std::memory_order_relaxed);
    s.connections_open = connections_open;
    s.connections_refused = m_connections_refused;
    return s;
}

}  // namespace sigil::keyd
