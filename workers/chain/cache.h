// Brief cache of contract reads, invalidated by our own writes and by the contract's events.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/chain/eth_client.h"

namespace sigil::workers {

using SteadyTime = std::chrono::steady_clock::time_point;

// Maps a call's encoded data to its return data for at most `ttl`. Entries are only caches: the
// chain is the truth, so any doubt (a write, an event, a full cache) simply drops them.
class ReadCache {
public:
    ReadCache(std::chrono::milliseconds ttl, std::size_t max_entries);

    // Shares an invalidation counter with the other workers (the scoreboard's ChainEpoch): when it
    // moves, this cache is dropped. Without one, only this process's writes and events invalidate.
    void ShareEpoch(std::atomic<std::uint64_t>* epoch) { m_shared_epoch = epoch; }

    // The epoch to pass to Put for a value read from the chain after this call.
    std::uint64_t Epoch();
    std::optional<common::Bytes> Get(const std::string& key, SteadyTime now);
    // Stores `value` unless the epoch moved since `read_epoch` (the value may predate a write).
    void Put(const std::string& key, common::Bytes value, SteadyTime now, std::uint64_t read_epoch);
    // Drops this process's entries (an event seen, a node failure).
    void InvalidateAll() { m_entries.clear(); }
    // Drops every worker's entries: call after our own write has been mined.
    void InvalidateEverywhere();
    std::size_t size() const { return m_entries.size(); }

private:
    void SyncEpoch();
    struct Entry {
        common::Bytes value;
        SteadyTime expires;
    };
    std::chrono::milliseconds m_ttl;
    std::size_t m_max_entries;
    std::unordered_map<std::string, Entry> m_entries;
    std::atomic<std::uint64_t>* m_shared_epoch = nullptr;
    std::uint64_t m_seen_epoch = 0;
};

// Polls the contract's logs at most once per `interval` and drops the whole cache when any new log
// appears (a direct-path write by an admin wallet, or another instance's relay). Writes are rare next
// to reads, so flushing everything is simpler than tracking which reads an event touches, and it
// cannot miss a dependency.
class ContractWatcher {
public:
    ContractWatcher(EthClient& eth, const common::Address20& contract, ReadCache& cache,
                    std::chrono::milliseconds interval);

    // Polls if the interval has passed. On a node failure the cache is dropped too (we can no longer
    // tell what changed) and the error returned; callers may ignore it and read through.
    common::Status MaybePoll(SteadyTime now);

    // Hears every new log of the contract, in chain order, before the poll moves past it (billing
    // follows admin changes this way). An error stops the poll at that log: the next poll asks for
    // its block again, so a listener must be idempotent per (tx_hash, log_index). Logs mined before
    // this worker's first poll are not heard. An empty function removes the listener.
    using LogListener = std::function<common::Status(const LogEntry&)>;
    void SetListener(LogListener listener) { m_listener = std::move(listener); }

private:
    EthClient& m_eth;
    common::Address20 m_contract;
    ReadCache& m_cache;
    std::chrono::milliseconds m_interval;
    std::optional<SteadyTime> m_last_poll;
    std::optional<std::uint64_t> m_last_block;
    LogListener m_listener;
};

// eth_call through the cache (keyed by target and data), polling the watcher first.
class CachedReader {
public:
    CachedReader(EthClient& eth, ReadCache& cache, ContractWatcher* watcher) :
        m_eth(eth), m_cache(cache), m_watcher(watcher) {}

    // Reverts are returned (reverted = true) but never cached.
    common::Result<CallOutcome> Call(const common::Address20& to, common::ByteView data);
    // Straight to the node: for checks whose staleness would be a security hole (key validity).
    common::Result<CallOutcome> CallUncached(const common::Address20& to, common::ByteView data);

private:
    EthClient& m_eth;
    ReadCache& m_cache;
    ContractWatcher* m_watcher;
};

}  // namespace sigil::workers
