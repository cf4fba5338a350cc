// The pool's shared chain-read cache and event-watch state, in the scoreboard's shared memory.
//
// Every worker of a pool reads the same contract for the same keys, groups and PKPs. With a cache
// per worker, a pool of hundreds of workers each serving a request every few seconds misses almost
// every time, and the chain node (a dev node on the same two cores, or a paid RPC endpoint) gets
// several calls per run. Here one worker's read serves the whole pool, and one worker at a time
// polls the contract's events for all (SharedWatch), so the node sees a few calls per second
// whatever the pool's size (issue 23).
//
// The memory is shared with processes that may die at any instruction, so nothing here takes a lock
// another process could be left waiting on: an entry is a seqlock (odd while written; a reader that
// sees it move or odd treats the entry as a miss), and a writer that died mid-write leaves an odd
// count that the next writer takes over after STUCK_WRITE_MS. Values are copied in and out as
// relaxed 64-bit atomics, so a torn read is well-defined and then rejected by the sequence check.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/bytes.h"

namespace sigil::common {

// Pool-wide state of the contract's event watch (workers/chain/cache.h, ContractWatcher).
struct SharedWatch {
    std::atomic<std::int64_t> lease_until_ms{0};  // a worker polling holds it until then (MonotonicMs)
    std::atomic<std::int64_t> polled_ok_ms{0};    // when the last poll that reached the head ended; 0 = never
    std::atomic<std::uint64_t> next_block{0};     // the first block not yet polled; 0 = no poll yet
    std::atomic<std::uint64_t> polls{0};          // polls done by the pool (tests, /health)
};

constexpr std::size_t SHARED_CACHE_VALUE_WORDS = 120;  // values up to 960 bytes; larger stay per worker
constexpr std::size_t SHARED_CACHE_ENTRIES = 4096;     // 4 MiB, touched only as entries fill
constexpr std::int64_t STUCK_WRITE_MS = 1000;

struct SharedCacheEntry {
    std::atomic<std::uint32_t> seq;        // even: stable; odd: being written
    std::atomic<std::uint32_t> len;        // value bytes
    std::atomic<std::int64_t> write_ms;    // when the current writer began (a dead writer is taken over)
    std::atomic<std::uint64_t> epoch;      // the pool's chain epoch the value was read at
    std::atomic<std::int64_t> expires_ms;  // MonotonicMs after which the entry is a miss
    std::atomic<std::uint64_t> key[4];     // keccak-256 of what was asked (target and call data)
    std::atomic<std::uint64_t> value[SHARED_CACHE_VALUE_WORDS];
};
static_assert(sizeof(SharedCacheEntry) == 1024);

struct SharedChainArea {
    SharedWatch watch;
    std::uint8_t pad[32];
    SharedCacheEntry entries[SHARED_CACHE_ENTRIES];
};

// Operations on a SharedChainArea's entries. Two-way set associative: a key may live in one of two
// neighbouring entries, so two hot keys that hash alike do not evict each other on every read.
class SharedReadTable {
public:
    static constexpr std::size_t MAX_VALUE = SHARED_CACHE_VALUE_WORDS * 8;

    explicit SharedReadTable(SharedChainArea* area) : m_area(area) {}

    // The value stored for `key` if it was read at `epoch` (the pool's current epoch: a value read
    // before a write or an event is never returned) and has not expired at `now_ms`.
    std::optional<Bytes> Get(const std::uint8_t (&key)[32], std::uint64_t epoch, std::int64_t now_ms) const;

    // Stores `value` (at most MAX_VALUE bytes; larger ones are not stored) read at `epoch`, until
    // `expires_ms`. Skips quietly when the entries are being written by others: it is only a cache.
    void Put(const std::uint8_t (&key)[32], ByteView value, std::uint64_t epoch, std::int64_t now_ms,
             std::int64_t expires_ms);

private:
    SharedChainArea* m_area;
};

}  // namespace sigil::common
