#include "workers/chain/cache.h"

#include "common/hex.h"
#include "common/keccak.h"

namespace sigil::workers {
namespace {

std::int64_t Ms(SteadyTime t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

void SharedKey(const std::string& key, std::uint8_t (&out)[32]) {
    const common::Hash32 h = common::Keccak256Hash(std::string_view(key));
    std::copy(h.begin(), h.end(), out);
}

// A poll that dies with its worker frees the watch after this; meanwhile the others poll nothing and
// serve key validity from the node, not the cache (the watch is not current).
constexpr std::int64_t WATCH_LEASE_MS = 3000;

}  // namespace

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
    if (it != m_entries.end()) {
        if (now < it->second.expires) return it->second.value;
        m_entries.erase(it);
    }
    if (!m_table) return std::nullopt;
    std::uint8_t shared_key[32];
    SharedKey(key, shared_key);
    return m_table->Get(shared_key, m_seen_epoch, Ms(now));
}

void ReadCache::Put(const std::string& key, common::Bytes value, SteadyTime now, std::uint64_t read_epoch) {
    if (m_ttl.count() <= 0 || m_max_entries == 0) return;
    SyncEpoch();
    if (read_epoch != m_seen_epoch) return;  // a write landed while we read: the value may be stale
    // A full cache is cleared rather than evicted entry by entry: it refills in one TTL.
    if (m_entries.size() >= m_max_entries && m_entries.find(key) == m_entries.end()) m_entries.clear();
    if (m_table) {
        std::uint8_t shared_key[32];
        SharedKey(key, shared_key);
        m_table->Put(shared_key, value, read_epoch, Ms(now), Ms(now + m_ttl));
    }
    m_entries[key] = Entry{std::move(value), now + m_ttl};
}

ContractWatcher::ContractWatcher(EthClient& eth, const common::Address20& contract, ReadCache& cache,
                                 std::chrono::milliseconds interval, common::SharedWatch* shared)
    : m_eth(eth), m_contract(contract), m_cache(cache), m_interval(interval), m_shared(shared) {}

void ContractWatcher::Flush() {
    if (m_shared != nullptr) {
        m_cache.InvalidateEverywhere();
    } else {
        m_cache.InvalidateAll();
    }
}

bool ContractWatcher::Current(SteadyTime now, std::chrono::milliseconds window) const {
    if (m_shared != nullptr) {
        const std::int64_t polled = m_shared->polled_ok_ms.load(std::memory_order_acquire);
        return polled != 0 && Ms(now) - polled <= window.count();
    }
    return m_polled_ok && now - *m_polled_ok <= window;
}

common::Status ContractWatcher::MaybePoll(SteadyTime now) {
    if (m_shared == nullptr) {
        if (m_last_poll && now - *m_last_poll < m_interval) return common::Success();
        m_last_poll = now;
        auto polled = Poll(m_next_block);
        if (polled.ok()) m_polled_ok = now;
        return polled;
    }
    const std::int64_t now_ms = Ms(now);
    common::SharedWatch& w = *m_shared;
    if (now_ms - w.polled_ok_ms.load(std::memory_order_acquire) < m_interval.count()) return common::Success();
    std::int64_t lease = w.lease_until_ms.load(std::memory_order_acquire);
    if (lease > now_ms) return common::Success();  // another worker is polling for the pool
    if (!w.lease_until_ms.compare_exchange_strong(lease, now_ms + WATCH_LEASE_MS, std::memory_order_acq_rel)) {
        return common::Success();
    }
    std::uint64_t next = w.next_block.load(std::memory_order_acquire);
    auto polled = Poll(next);
    w.next_block.store(next, std::memory_order_release);
    if (polled.ok()) {
        // The poll's start: every log mined before it has been seen.
        w.polled_ok_ms.store(now_ms, std::memory_order_release);
        w.polls.fetch_add(1, std::memory_order_relaxed);
    }
    w.lease_until_ms.store(0, std::memory_order_release);
    return polled;
}

common::Status ContractWatcher::Poll(std::uint64_t& next_block) {
    auto head = m_eth.BlockNumber();
    if (!head.ok()) {
        Flush();
        return head.error();
    }
    if (next_block == 0 || *head + 1 < next_block) {
        // First poll: everything cached so far was read before we knew the head; or the chain went
        // backwards (a reorg or a restarted dev node): trust nothing cached.
        Flush();
        next_block = *head + 1;
        return common::Success();
    }
    if (*head + 1 == next_block) return common::Success();
    auto logs = m_eth.GetLogs(m_contract, next_block, *head);
    if (!logs.ok()) {
        Flush();
        return logs.error();
    }
    if (!logs->empty()) Flush();
    if (m_listener) {
        for (const LogEntry& log : *logs) {
            if (auto heard = m_listener(log); !heard.ok()) {
                next_block = std::max<std::uint64_t>(log.block_number, 1);  // hear this block again next time
                return heard.error();
            }
        }
    }
    next_block = *head + 1;
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

common::Result<CallOutcome> CachedReader::CallWatched(const common::Address20& to, common::ByteView data, Keep keep) {
    const auto now = std::chrono::steady_clock::now();
    if (m_watcher == nullptr) return m_eth.Call(to, data);
    (void)m_watcher->MaybePoll(now);
    const auto window = 2 * m_watcher->interval();
    std::string key = common::HexEncode(to);
    key += ':';
    key += common::HexEncode(data);
    if (m_watcher->Current(now, window)) {
        if (auto hit = m_cache.Get(key, now)) return CallOutcome{false, std::move(*hit)};
    }
    const std::uint64_t epoch = m_cache.Epoch();
    auto out = m_eth.Call(to, data);
    if (!out.ok()) return out;
    if (!out->reverted && keep(out->data)) m_cache.Put(key, out->data, now, epoch);
    return out;
}

}  // namespace sigil::workers
