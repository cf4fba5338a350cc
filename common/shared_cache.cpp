#include "common/shared_cache.h"

#include <cstring>

namespace sigil::common {
namespace {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(SHARED_CACHE_ENTRIES % 2 == 0);

struct KeyWords {
    std::uint64_t w[4];
};

KeyWords Words(const std::uint8_t (&key)[32]) {
    KeyWords k{};
    std::memcpy(k.w, key, sizeof k.w);
    return k;
}

std::size_t FirstOfSet(const KeyWords& k) { return static_cast<std::size_t>(k.w[0] % (SHARED_CACHE_ENTRIES / 2)) * 2; }

bool SameKey(const SharedCacheEntry& e, const KeyWords& k) {
    for (int i = 0; i < 4; ++i) {
        if (e.key[i].load(std::memory_order_relaxed) != k.w[i]) return false;
    }
    return true;
}

// A seqlock read: the copy counts only if the sequence was even and did not move meanwhile.
std::optional<Bytes> TryRead(const SharedCacheEntry& e, const KeyWords& k, std::uint64_t epoch, std::int64_t now_ms) {
    const std::uint32_t before = e.seq.load(std::memory_order_acquire);
    if ((before & 1U) != 0) return std::nullopt;
    if (!SameKey(e, k)) return std::nullopt;
    const std::uint32_t len = e.len.load(std::memory_order_relaxed);
    if (len == 0 || len > SharedReadTable::MAX_VALUE) return std::nullopt;
    if (e.epoch.load(std::memory_order_relaxed) != epoch) return std::nullopt;
    if (now_ms >= e.expires_ms.load(std::memory_order_relaxed)) return std::nullopt;
    std::uint64_t words[SHARED_CACHE_VALUE_WORDS];
    const std::size_t n = (len + 7) / 8;
    for (std::size_t i = 0; i < n; ++i) words[i] = e.value[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.seq.load(std::memory_order_relaxed) != before) return std::nullopt;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(words);
    return Bytes(bytes, bytes + len);
}

// Takes the entry for writing: the sequence goes odd. A sequence left odd by a writer that died
// (older than STUCK_WRITE_MS) is taken over. Returns the odd sequence, or nothing when another
// writer holds it.
std::optional<std::uint32_t> TryLock(SharedCacheEntry& e, std::int64_t now_ms) {
    std::uint32_t seq = e.seq.load(std::memory_order_relaxed);
    std::uint32_t locked = seq + 1;
    if ((seq & 1U) != 0) {
        if (now_ms - e.write_ms.load(std::memory_order_relaxed) < STUCK_WRITE_MS) return std::nullopt;
        locked = seq + 2;
    }
    if (!e.seq.compare_exchange_strong(seq, locked, std::memory_order_acq_rel)) return std::nullopt;
    e.write_ms.store(now_ms, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // the odd sequence is seen before any new byte
    return locked;
}

}  // namespace

std::optional<Bytes> SharedReadTable::Get(const std::uint8_t (&key)[32], std::uint64_t epoch, std::int64_t now_ms) const {
    const KeyWords k = Words(key);
    const std::size_t first = FirstOfSet(k);
    for (std::size_t i = first; i < first + 2; ++i) {
        if (auto hit = TryRead(m_area->entries[i], k, epoch, now_ms)) return hit;
    }
    return std::nullopt;
}

void SharedReadTable::Put(const std::uint8_t (&key)[32], ByteView value, std::uint64_t epoch, std::int64_t now_ms,
                          std::int64_t expires_ms) {
    if (value.empty() || value.size() > MAX_VALUE || expires_ms <= now_ms) return;
    const KeyWords k = Words(key);
    const std::size_t first = FirstOfSet(k);
    // The entry already holding this key, else one holding nothing still useful, else the one that
    // expires first. Racy reads: the choice is a heuristic, the lock below is what is exact.
    std::size_t victim = first;
    std::int64_t soonest = INT64_MAX;
    for (std::size_t i = first; i < first + 2; ++i) {
        const SharedCacheEntry& e = m_area->entries[i];
        if (SameKey(e, k)) {
            victim = i;
            break;
        }
        const std::int64_t expires = e.expires_ms.load(std::memory_order_relaxed);
        const bool useless = e.len.load(std::memory_order_relaxed) == 0 || expires <= now_ms ||
                             e.epoch.load(std::memory_order_relaxed) != epoch;
        const std::int64_t rank = useless ? INT64_MIN : expires;
        if (rank < soonest) {
            soonest = rank;
            victim = i;
        }
    }
    SharedCacheEntry& e = m_area->entries[victim];
    const auto locked = TryLock(e, now_ms);
    if (!locked) return;
    for (int i = 0; i < 4; ++i) e.key[i].store(k.w[i], std::memory_order_relaxed);
    std::uint64_t words[SHARED_CACHE_VALUE_WORDS] = {};
    std::memcpy(words, value.data(), value.size());
    const std::size_t n = (value.size() + 7) / 8;
    for (std::size_t i = 0; i < n; ++i) e.value[i].store(words[i], std::memory_order_relaxed);
    e.len.store(static_cast<std::uint32_t>(value.size()), std::memory_order_relaxed);
    e.epoch.store(epoch, std::memory_order_relaxed);
    e.expires_ms.store(expires_ms, std::memory_order_relaxed);
    e.seq.store(*locked + 1, std::memory_order_release);
}

}  // namespace sigil::common
