#include "workers/chain/cache.h"

#include "common/hex.h"

namespace sigil::workers {

ReadCache::ReadCache(std::chrono::milliseconds ttl, std::size_t max_entries)
    : m_ttl(ttl), m_max_entries(max_entries) {}

void ReadCache::SyncEpoch() {
    if (m_shared_epoch == nullptr) return;
    const std::uint64_t e = m_shared_epoch->load(std::memory_order_acquire);
    if (e != m_seen_epoch) {
        m_entries.clear();
        m_seen_epoch = e;
    }
}

std::uint64_t ReadCache::Epoch() {
    SyncEpoch();
    return m_seen_epoch;
}

void ReadCache::InvalidateEverywhere() {
    m_entries.clear();
    if (m_shared_epoch != nullptr) m_seen_epoch = m_shared_epoch->fetch_add(1, std::memory_order_acq_rel) + 1;
}

std::optional<common::Bytes> ReadCache::Get(const std::string& key, SteadyTime now) {
    SyncEpoch();
    auto it = m_entries.find(key);
    if (it == m_entries.end()) return std::nullopt;
    if (now >= it->second.expires) {
        m_entries.erase(it);
        return std::nullopt;
    }
    return it->second.value;
}

void ReadCache::Put(const std::string& key, common::Bytes value, SteadyTime now, std::uint64_t read_epoch) {
    if (m_ttl.count() <= 0 || m_max_entries == 0) return;
    SyncEpoch();
    if (read_epoch != m_seen_epoch) return;  // a write landed while we read: the value may be stale
    // A full cache is cleared rather than evicted entry by entry: it refills in one TTL.
    if (m_entries.size() >= m_max_entries && m_entries.find(key) == m_entries.end()) m_entries.clear();
    m_entries[key] = Entry{std::move(value), now + m_ttl};
}

ContractWatcher::ContractWatcher(EthClient& eth, const common::Address20& contract, ReadCache& cache,
                                 std::chrono::milliseconds interval)
    : m_eth(eth), m_contract(contract), m_cache(cache), m_interval(interval) {}

common::Status ContractWatcher::MaybePoll(SteadyTime now) {
    if (m_last_poll && now - *m_last_poll < m_interval) return common::Success();
    m_last_poll = now;
    auto head = m_eth.BlockNumber();
    if (!head.ok()) {
        m_cache.InvalidateAll();
        return head.error();
    }
    if (!m_last_block) {
        // First poll: everything cached so far was read before we knew the head; start clean.
        m_cache.InvalidateAll();
        m_last_block = *head;
        return common::Success();
    }
    if (*head < *m_last_block) {
        // The chain went backwards (a reorg or a restarted dev node): trust nothing cached.
        m_cache.InvalidateAll();
        m_last_block = *head;
        return common::Success();
    }
    if (*head == *m_last_block) return common::Success();
    auto logs = m_eth.GetLogs(m_contract, *m_last_block + 1, *head);
    if (!logs.ok()) {
        m_cache.InvalidateAll();
        return logs.error();
    }
    if (!logs->empty()) m_cache.InvalidateAll();
    if (m_listener) {
        for (const LogEntry& log : *logs) {
            if (auto heard = m_listener(log); !heard.ok()) {
                m_last_block = log.block_number > 0 ? log.block_number - 1 : 0;  // hear this block again next time
                return heard.error();
            }
        }
    }
    m_last_block = *head;
    return common::Success();
}

common::Result<CallOutcome> CachedReader::CallUncached(const common::Address20& to, common::ByteView data) {
    return m_eth.Call(to, data);
}

common::Result<CallOutcome> CachedReader::Call(const common::Address20& to, common::ByteView data) {
    const auto now = std::chrono::steady_clock::now();
    if (m_watcher != nullptr) (void)m_watcher->MaybePoll(now);  // a failed poll already flushed the cache
    std::string key = common::HexEncode(to);
    key += ':';
    key += common::HexEncode(data);
    if (auto hit = m_cache.Get(key, now)) return CallOutcome{false, std::move(*hit)};
    const std::uint64_t epoch = m_cache.Epoch();
    auto out = m_eth.Call(to, data);
    if (!out.ok()) return out;
    if (!out->reverted) m_cache.Put(key, out->data, now, epoch);
    return out;
}

}  // namespace sigil::workers
