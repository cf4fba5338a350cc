#include "workers/chain/payer_leases.h"

#include <thread>
#include <utility>

#include "common/metrics.h"

namespace sigil::workers {

PayerLeases::PayerLeases(std::atomic<std::uint32_t>* owners, std::uint32_t payers, std::uint32_t owner_tag)
    : m_owners(owners), m_payers(payers), m_tag(owner_tag == 0 ? 1 : owner_tag) {
    if (m_owners == nullptr) {
        m_own = std::make_unique<std::atomic<std::uint32_t>[]>(payers);
        for (std::uint32_t i = 0; i < payers; ++i) m_own[i].store(0);
        m_owners = m_own.get();
    }
    // Workers start their scans at different points (a worker mostly finds its last payer free again).
    m_next = payers == 0 ? 0 : static_cast<std::uint32_t>((static_cast<std::uint64_t>(m_tag) * 2654435761u) % payers);
}

PayerLeases::Lease::Lease(Lease&& o) noexcept
    : m_word(std::exchange(o.m_word, nullptr)), m_index(o.m_index), m_tag(o.m_tag) {}

PayerLeases::Lease& PayerLeases::Lease::operator=(Lease&& o) noexcept {
    if (this != &o) {
        Free();
        m_word = std::exchange(o.m_word, nullptr);
        m_index = o.m_index;
        m_tag = o.m_tag;
    }
    return *this;
}

void PayerLeases::Lease::Free() {
    if (m_word == nullptr) return;
    // Only if still ours: the word is never taken from a live worker, but a compare costs nothing.
    std::uint32_t expected = m_tag;
    m_word->compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
    m_word = nullptr;
}

std::optional<PayerLeases::Lease> PayerLeases::TryAcquire() {
    for (std::uint32_t k = 0; k < m_payers; ++k) {
        const std::uint32_t i = (m_next + k) % m_payers;
        std::uint32_t expected = 0;
        if (m_owners[i].compare_exchange_strong(expected, m_tag, std::memory_order_acq_rel)) {
            m_next = i;  // next time, this payer first: its nonce is warm in the node's pool view
            return Lease(&m_owners[i], i, m_tag);
        }
    }
    return std::nullopt;
}

common::Result<PayerLeases::Lease> PayerLeases::Acquire(std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (auto lease = TryAcquire()) return std::move(*lease);
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    common::CountOverloadRefusal();
    return common::MakeError(common::ErrorKind::Suspended, "overloaded",
                             "every payer wallet of this instance has a write in flight; retry in a second");
}

}  // namespace sigil::workers
