#include "common/scoreboard.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace sigil::common {

// Lock-free atomics are plain memory, so they work across processes; a lock-based fallback
// would not, hence the checks.
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

struct Scoreboard::Header {
    std::uint64_t magic;
    std::uint32_t version;
    std::uint32_t slots;
    std::atomic<std::uint64_t> requests_served;
    std::atomic<std::uint64_t> chain_epoch;  // bumped after every relayed write (see ChainEpoch)
    std::atomic<std::uint64_t> connections_accepted;
    SharedCircuit chain_circuit;  // 16 bytes
    std::uint8_t pad[8];  // keep slots off the header's cache line
    std::uint8_t cache_key[32];  // CacheKey(): drawn by Create
    std::uint8_t pad2[32];
};

namespace {

constexpr std::uint64_t kMagic = 0x5349474953425244ULL;  // "SIGISBRD"
constexpr std::uint32_t kVersion = 9;

// The payer lease table follows the slots.
std::size_t SlotsEnd(std::uint32_t slots) {
    return 128 + static_cast<std::size_t>(slots) * sizeof(ScoreboardSlot);  // 128 = sizeof(Header)
}

std::size_t PayersEnd(std::uint32_t slots) {
    return SlotsEnd(slots) + Scoreboard::MAX_PAYERS * sizeof(std::atomic<std::uint32_t>);
}

// The shared chain area follows the payer table, on a cache line of its own.
std::size_t ChainAreaStart(std::uint32_t slots) { return (PayersEnd(slots) + 63) / 64 * 64; }

std::size_t SizeFor(std::uint32_t slots) { return ChainAreaStart(slots) + sizeof(SharedChainArea); }

}  // namespace

const char* ActivityName(Activity activity) {
    switch (activity) {
        case Activity::None: return "none";
        case Activity::Run: return "run";
        case Activity::Chain: return "chain";
        case Activity::Receipt: return "receipt";
        case Activity::Keyd: return "keyd";
        case Activity::Gateway: return "gateway";
        case Activity::Fetch: return "fetch";
        case Activity::Ledger: return "ledger";
    }
    return "none";
}

Scoreboard::Scoreboard(UniqueFd fd, void* map, std::size_t size) : m_fd(std::move(fd)), m_map(map), m_size(size) {}

Scoreboard::Scoreboard(Scoreboard&& o) noexcept
    : m_fd(std::move(o.m_fd)), m_map(std::exchange(o.m_map, nullptr)), m_size(std::exchange(o.m_size, 0)) {}

Scoreboard& Scoreboard::operator=(Scoreboard&& o) noexcept {
    if (this != &o) {
        if (m_map != nullptr) munmap(m_map, m_size);
        m_fd = std::move(o.m_fd);
        m_map = std::exchange(o.m_map, nullptr);
        m_size = std::exchange(o.m_size, 0);
    }
    return *this;
}

Scoreboard::~Scoreboard() {
    if (m_map != nullptr) munmap(m_map, m_size);
}

Scoreboard::Header* Scoreboard::header() const { return static_cast<Header*>(m_map); }

Result<Scoreboard> Scoreboard::Create(const std::string& name, std::uint32_t slots) {
    if (slots == 0 || slots > MAX_SLOTS) {
        return MakeError(ErrorKind::InvalidInput, "scoreboard_slots", "scoreboard slot count out of range");
    }
    static_assert(sizeof(Header) == 128);
    UniqueFd fd(memfd_create(name.c_str(), MFD_CLOEXEC));
    const std::size_t size = SizeFor(slots);
    if (!fd.valid() || ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
        return MakeError(ErrorKind::Internal, "scoreboard_create", std::string("memfd: ") + std::strerror(errno));
    }
    void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) {
        return MakeError(ErrorKind::Internal, "scoreboard_create", std::string("mmap: ") + std::strerror(errno));
    }
    // ftruncate zero-fills: every slot starts Free with zero counters.
    auto* h = static_cast<Header*>(map);
    h->magic = kMagic;
    h->version = kVersion;
    h->slots = slots;
    Scoreboard sb(std::move(fd), map, size);
    for (std::size_t done = 0; done < sizeof(h->cache_key);) {
        const ssize_t n = getrandom(h->cache_key + done, sizeof(h->cache_key) - done, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return MakeError(ErrorKind::Internal, "scoreboard_create", std::string("getrandom: ") + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    return sb;
}

Result<Scoreboard> Scoreboard::Attach(int raw_fd) {
    UniqueFd fd(raw_fd);
    auto bad = [](const char* why) {
        return MakeError(ErrorKind::InvalidInput, "scoreboard_invalid", std::string("scoreboard: ") + why);
    };
    struct stat st {};
    if (!fd.valid() || fstat(fd.get(), &st) != 0) return bad("descriptor not open");
    if (st.st_size < static_cast<off_t>(sizeof(Header))) return bad("too small");
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) return bad("mmap failed");
    Scoreboard sb(std::move(fd), map, size);
    const Header* h = sb.header();
    if (h->magic != kMagic || h->version != kVersion) return bad("bad magic or version");
    if (h->slots == 0 || h->slots > MAX_SLOTS || SizeFor(h->slots) != size) return bad("size does not match slot count");
    return sb;
}

std::uint32_t Scoreboard::capacity() const { return header()->slots; }

ByteView Scoreboard::CacheKey() const { return ByteView(header()->cache_key, sizeof(header()->cache_key)); }

ScoreboardSlot& Scoreboard::Slot(std::uint32_t index) {
    if (index >= capacity()) {
        std::fprintf(stderr, "scoreboard: slot %u out of range\n", index);
        std::abort();
    }
    auto* base = static_cast<std::uint8_t*>(m_map) + sizeof(Header);
    return reinterpret_cast<ScoreboardSlot*>(base)[index];
}

const ScoreboardSlot& Scoreboard::Slot(std::uint32_t index) const {
    return const_cast<Scoreboard*>(this)->Slot(index);
}

void Scoreboard::Assign(std::uint32_t index, std::int32_t pid, std::uint32_t generation) {
    auto& s = Slot(index);
    s.requests.store(0);
    s.request_start_ms.store(0);
    s.drain.store(0);
    s.run_key.store(0);
    s.activity.store(0);
    s.generation.store(generation);
    s.pid.store(pid);
    s.state.store(static_cast<std::uint32_t>(SlotState::Starting));
}

void Scoreboard::Release(std::uint32_t index) {
    auto& s = Slot(index);
    s.state.store(static_cast<std::uint32_t>(SlotState::Free));
    s.pid.store(0);
    s.request_start_ms.store(0);
    s.requests.store(0);
    s.run_key.store(0);  // a worker killed mid-run leaves no phantom run behind
    s.activity.store(0);  // nor a phantom chain call holding the reserve
    s.history_pending.store(0);  // counted by the supervisor before the release (ChildPool::Reap)
    // Nor a payer wallet leased mid-write: its transaction (if sent) is in the node's pool, and the
    // next lessee's nonce, read from the node's pending count, comes after it.
    const std::uint32_t tag = index + 1;
    std::atomic<std::uint32_t>* owners = PayerOwners();
    for (std::uint32_t p = 0; p < MAX_PAYERS; ++p) {
        std::uint32_t expected = tag;
        owners[p].compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
    }
}

void Scoreboard::MarkIdle(std::uint32_t index) {
    auto& s = Slot(index);
    s.request_start_ms.store(0);
    s.state.store(static_cast<std::uint32_t>(SlotState::Idle));
}

void Scoreboard::MarkBusy(std::uint32_t index, std::int64_t now_ms) {
    auto& s = Slot(index);
    // Start time first: the supervisor reads state then time, and must never see Busy with a stale time.
    s.request_start_ms.store(now_ms);
    s.state.store(static_cast<std::uint32_t>(SlotState::Busy));
}

void Scoreboard::MarkDraining(std::uint32_t index) {
    Slot(index).state.store(static_cast<std::uint32_t>(SlotState::Draining));
}

std::atomic<std::uint64_t>& Scoreboard::ChainEpoch() { return header()->chain_epoch; }

SharedCircuit& Scoreboard::ChainCircuit() { return header()->chain_circuit; }

SharedChainArea* Scoreboard::ChainArea() {
    return reinterpret_cast<SharedChainArea*>(static_cast<std::uint8_t*>(m_map) + ChainAreaStart(capacity()));
}
const SharedCircuit& Scoreboard::ChainCircuit() const { return header()->chain_circuit; }

std::atomic<std::uint32_t>* Scoreboard::PayerOwners() {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::uint8_t*>(m_map) + SlotsEnd(capacity()));
}

std::uint32_t Scoreboard::PayersLeasedBy(std::uint32_t index) const {
    const std::uint32_t tag = index + 1;
    const std::atomic<std::uint32_t>* owners = const_cast<Scoreboard*>(this)->PayerOwners();
    std::uint32_t n = 0;
    for (std::uint32_t p = 0; p < MAX_PAYERS; ++p) n += owners[p].load(std::memory_order_acquire) == tag ? 1 : 0;
    return n;
}

std::uint64_t Scoreboard::CountRequest(std::uint32_t index) {
    header()->requests_served.fetch_add(1);
    return Slot(index).requests.fetch_add(1) + 1;
}

void Scoreboard::CountConnection() { header()->connections_accepted.fetch_add(1, std::memory_order_relaxed); }

ScoreboardSummary Scoreboard::Summarize() const {
    ScoreboardSummary sum;
    sum.capacity = capacity();
    sum.requests_served = header()->requests_served.load();
    sum.connections_accepted = header()->connections_accepted.load();
    for (std::uint32_t i = 0; i < sum.capacity; ++i) {
        switch (static_cast<SlotState>(Slot(i).state.load())) {
            case SlotState::Free: continue;
            case SlotState::Starting: ++sum.starting; break;
            case SlotState::Idle: ++sum.idle; break;
            case SlotState::Busy: {
                ++sum.busy;
                const auto a = Slot(i).activity.load(std::memory_order_relaxed);
                ++sum.in_flight[a < ACTIVITY_KINDS ? a : 0];
                break;
            }
            case SlotState::Draining: ++sum.draining; break;
        }
        ++sum.total;
    }
    return sum;
}

std::uint32_t Scoreboard::CountRunning(std::uint64_t key_tag) const {
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < capacity(); ++i) {
        if (Slot(i).run_key.load(std::memory_order_acquire) == key_tag) ++n;
    }
    return n;
}

std::uint32_t Scoreboard::CountChainBound() const {
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < capacity(); ++i) {
        const auto a = static_cast<Activity>(Slot(i).activity.load(std::memory_order_acquire));
        if (a == Activity::Chain || a == Activity::Receipt) ++n;
    }
    return n;
}

}  // namespace sigil::common
