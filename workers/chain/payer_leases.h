// API payer wallets leased per relayed write (DESIGN.md section 7): a write holds one payer from the
// nonce it reads to its receipt, so writes in flight never share a nonce sequence, however many
// workers the pool has. The table is the scoreboard's (shared by the pool) or, without one (a
// standalone worker, tests), this object's own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/result.h"

namespace sigil::workers {

class PayerLeases {
public:
    // `owners`: the scoreboard's PayerOwners() (null: a table of this process's own); `payers`: how
    // many wallets the instance has ([chain] payers, 1..Scoreboard::MAX_PAYERS); `owner_tag`: this
    // worker's slot + 1, what the supervisor's Scoreboard::Release(slot) clears when it reaps us.
    PayerLeases(std::atomic<std::uint32_t>* owners, std::uint32_t payers, std::uint32_t owner_tag);

    // One payer held; destroying it gives the payer back.
    class Lease {
    public:
        Lease(Lease&& o) noexcept;
        Lease& operator=(Lease&& o) noexcept;
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ~Lease() { Free(); }
        std::uint32_t Index() const { return m_index; }

    private:
        friend class PayerLeases;
        Lease(std::atomic<std::uint32_t>* word, std::uint32_t index, std::uint32_t tag)
            : m_word(word), m_index(index), m_tag(tag) {}
        void Free();

        std::atomic<std::uint32_t>* m_word;
        std::uint32_t m_index;
        std::uint32_t m_tag;
    };

    // A free payer now, or none. Scans from a point that moves on each call, so workers spread over
    // the table instead of all contending for payer 0.
    std::optional<Lease> TryAcquire();
    // A free payer, waiting up to `wait` for one to be given back. Errors: Suspended "overloaded"
    // (503 with Retry-After: 1; every payer has a write in flight).
    common::Result<Lease> Acquire(std::chrono::milliseconds wait);

    std::uint32_t Payers() const { return m_payers; }

private:
    std::unique_ptr<std::atomic<std::uint32_t>[]> m_own;
    std::atomic<std::uint32_t>* m_owners;
    std::uint32_t m_payers;
    std::uint32_t m_tag;
    std::uint32_t m_next;
};

}  // namespace sigil::workers
