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
#include "common/shared_cache.h"
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
    // Also keeps values (up to SharedReadTable::MAX_VALUE bytes) in the pool's shared table, so one
    // worker's read serves every worker (needs ShareEpoch: the table's entries carry the epoch).
    void ShareTable(common::SharedChainArea* area) { m_table.emplace(area); }

    // The epoch to pass to Put for a value read from the chain after this call.
    std::uint64_t Epoch();
    std::optional<common::Bytes> Get(const std::string& key, SteadyTime now);
    // Stores `value` unless the epoch moved since `read_epoch` (the value may predate a write).
    void Put(const std::string& key, common::Bytes value, SteadyTime now, std::uint64_t read_epoch);
    // Drops this process's entries (an event seen, a node failure).
    void InvalidateAll() { m_entries.clear(); }
    bool Shared() const { return m_shared_epoch != nullptr; }
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
    std::optional<common::SharedReadTable> m_table;
};

// Polls the contract's logs at most once per `interval` and drops the whole cache when any new log
// appears (a direct-path write by an admin wallet, or another instance's relay). Writes are rare next
// to reads, so flushing everything is simpler than tracking which reads an event touches, and it
// cannot miss a dependency.
//
// With a SharedWatch (the scoreboard's), the pool polls as one: the worker that finds the last poll
// older than `interval` takes a lease and polls for all, and a new log drops every worker's cache
// (the shared epoch). A pool of hundreds of workers then costs the node a few calls per second.
class ContractWatcher {
public:
    ContractWatcher(EthClient& eth, const common::Address20& contract, ReadCache& cache,
                    std::chrono::milliseconds interval, common::SharedWatch* shared = nullptr);

    // Polls if the interval has passed (and, shared, no other worker is polling). On a node failure
    // the cache is dropped too (we can no longer tell what changed) and the error returned; callers
    // may ignore it and read through.
    common::Status MaybePoll(SteadyTime now);

    // Whether every log mined up to `window` before `now` has been seen: the last poll that reached
    // the head began within `window`. Key validity may be served from the cache only then.
    bool Current(SteadyTime now, std::chrono::milliseconds window) const;

    // Hears every new log of the contract, in chain order, before the poll moves past it (billing
    // follows admin changes this way). An error stops the poll at that log: the next poll asks for
    // its block again, so a listener must be idempotent per (tx_hash, log_index). Logs mined before
    // this worker's first poll are not heard. An empty function removes the listener.
    using LogListener = std::function<common::Status(const LogEntry&)>;
    void SetListener(LogListener listener) { m_listener = std::move(listener); }

    std::chrono::milliseconds interval() const { return m_interval; }

private:
    // One poll from `next_block` (0: none yet; the first poll only learns the head). Returns the
    // next block to poll from; on an error, how far it got is in `next_block`.
    common::Status Poll(std::uint64_t& next_block);
    // Drops what the pool (shared) or this worker cached.
    void Flush();

    EthClient& m_eth;
    common::Address20 m_contract;
    ReadCache& m_cache;
    std::chrono::milliseconds m_interval;
    common::SharedWatch* m_shared;
    std::optional<SteadyTime> m_last_poll;
    std::uint64_t m_next_block = 0;
    std::optional<SteadyTime> m_polled_ok;  // start of the last poll that reached the head (not shared)
    LogListener m_listener;
};

// eth_call through the cache (keyed by target and data), polling the watcher first.
class CachedReader {
public:
    CachedReader(EthClient& eth, ReadCache& cache, ContractWatcher* watcher) :
        m_eth(eth), m_cache(cache), m_watcher(watcher) {}

    // Reverts are returned (reverted = true) but never cached.
    common::Result<CallOutcome> Call(const common::Address20& to, common::ByteView data);
    // For answers whose staleness would be a security hole (key validity): served from the cache
    // only while the event watch is current (every log up to 2 x its interval ago seen, so a key
    // removed straight on the contract stops working within that), and stored only when `keep`
    // accepts the answer (a valid key: a key just added on chain must work at once). Without a
    // current watch (the node down or slow) it goes to the node, so a chain outage fails closed.
    using Keep = bool (*)(common::ByteView answer);
    common::Result<CallOutcome> CallWatched(const common::Address20& to, common::ByteView data, Keep keep);
    // Straight to the node: for checks whose staleness would be a security hole (key validity).
    common::Result<CallOutcome> CallUncached(const common::Address20& to, common::ByteView data);

private:
    EthClient& m_eth;
    ReadCache& m_cache;
    ContractWatcher* m_watcher;
};

}  // namespace sigil::workers
