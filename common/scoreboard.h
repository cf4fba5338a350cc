// The supervisor/worker scoreboard: one shared-memory slot per worker with its state, the start
// time of its current request and its request count (php-fpm's scoreboard).
//
// The supervisor creates it (memfd, inherited by workers as a descriptor whose number is passed in
// SIGIL_SCOREBOARD_FD, the slot index in SIGIL_SCOREBOARD_SLOT). A worker writes only its own slot;
// the supervisor reads all slots to enforce the hard timeout and resets a slot when its worker is
// reaped. /health reads Summarize(). Fields are lock-free atomics, so a crashed worker can never
// leave a lock held; readers may see a slot mid-update, which only skews a count by one.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/handles.h"
#include "common/result.h"
#include "common/shared_cache.h"

namespace sigil::common {

enum class SlotState : std::uint32_t {
    Free = 0,      // no worker
    Starting = 1,  // forked, not yet accepting
    Idle = 2,      // waiting for a request
    Busy = 3,      // serving a request since request_start_ms
    Draining = 4,  // told to stop: finishes its request (if any) and exits
};

// What a worker's request is waiting on right now (common/activity.h sets it): /health shows the
// requests in flight by kind, and the chain reserve counts the slots waiting on the chain node.
enum class Activity : std::uint32_t {
    None = 0,     // computing, or no request
    Run = 1,      // a sandbox child is running an action
    Chain = 2,    // a JSON-RPC call to the chain node
    Receipt = 3,  // waiting for a relayed write's receipt
    Keyd = 4,
    Gateway = 5,  // loading action code from an IPFS gateway
    Fetch = 6,    // an action's fetch
    Ledger = 7,   // the billing ledger's database
};
constexpr std::uint32_t ACTIVITY_KINDS = 8;
// "run", "chain", ... as /health names them ("none" for None).
const char* ActivityName(Activity activity);

struct ScoreboardSlot {
    std::atomic<std::int32_t> pid;
    std::atomic<std::uint32_t> state;
    std::atomic<std::uint32_t> generation;       // supervisor reload generation that started it
    std::atomic<std::int64_t> request_start_ms;  // MonotonicMs() when the current request began
    std::atomic<std::uint64_t> requests;         // requests served by the current worker
    // Set by the supervisor (before its SIGQUIT) when the worker should finish and exit: a busy
    // worker reads it between requests without a system call.
    std::atomic<std::uint32_t> drain;
    // The key the worker is running an action for (a tag of its hash, 0 = none): the pool-wide
    // concurrent-runs cap per key counts the slots holding the same tag.
    std::atomic<std::uint64_t> run_key;
    // Activity (as its number): what the current request waits on; None between requests.
    std::atomic<std::uint32_t> activity;
    // Run history records the worker has queued and neither written nor counted dropped yet: a
    // worker that dies with some (SIGTERM, SIGKILL, a crash) cannot count them itself, so the
    // supervisor counts them dropped when it reaps the worker (none is lost silently).
    std::atomic<std::uint64_t> history_pending;
};

// The chain node's health as every worker sees it (the circuit breaker of DESIGN.md section 10
// keeps its state here, so one worker's failures spare the others the wait). Plain atomics: a
// worker that dies mid-update leaves at worst one failure miscounted.
struct SharedCircuit {
    std::atomic<std::int64_t> open_until_ms{0};  // MonotonicMs() before which calls are refused; 0 = closed
    std::atomic<std::uint32_t> failures{0};      // consecutive failed calls, across the pool
};

struct ScoreboardSummary {
    std::uint32_t total = 0;     // slots with a worker (any state but Free)
    std::uint32_t idle = 0;
    std::uint32_t busy = 0;
    std::uint32_t starting = 0;
    std::uint32_t draining = 0;
    std::uint64_t requests_served = 0;  // since the supervisor started, by every worker ever
    std::uint64_t connections_accepted = 0;  // FastCGI connections from nginx, same span
    std::uint32_t capacity = 0;         // number of slots
    // Busy slots by Activity (index = its number; [0] = busy on none of them, e.g. computing).
    std::uint32_t in_flight[ACTIVITY_KINDS] = {};
};

class Scoreboard {
public:
    // Env variable names the supervisor sets for its workers.
    static constexpr const char* FD_ENV = "SIGIL_SCOREBOARD_FD";
    static constexpr const char* SLOT_ENV = "SIGIL_SCOREBOARD_SLOT";
    static constexpr std::uint32_t MAX_SLOTS = 4096;
    // API payer wallets the lease table can hold (keyd's own limit, keyd::IPC_MAX_PAYERS, is the same).
    static constexpr std::uint32_t MAX_PAYERS = 1024;

    // Creates a zeroed scoreboard with `slots` slots (1..MAX_SLOTS) in a memfd named `name`.
    // The descriptor is close-on-exec; the supervisor dup2()s it into each child.
    // Errors: InvalidInput "scoreboard_slots" (slot count), Internal "scoreboard_create" (memfd,
    // ftruncate or mmap failed; the message has errno text).
    static Result<Scoreboard> Create(const std::string& name, std::uint32_t slots);

    // Maps an existing scoreboard from a descriptor (takes ownership of `fd`). Checks the header's
    // magic and that the size matches its slot count. Errors: InvalidInput "scoreboard_invalid".
    static Result<Scoreboard> Attach(int fd);

    Scoreboard(Scoreboard&& o) noexcept;
    Scoreboard& operator=(Scoreboard&& o) noexcept;
    Scoreboard(const Scoreboard&) = delete;
    Scoreboard& operator=(const Scoreboard&) = delete;
    ~Scoreboard();

    int fd() const { return m_fd.get(); }
    std::uint32_t capacity() const;

    // The slot at `index`; index must be < capacity() (aborts otherwise: a bug, not input).
    ScoreboardSlot& Slot(std::uint32_t index);
    const ScoreboardSlot& Slot(std::uint32_t index) const;

    // Supervisor side.
    void Assign(std::uint32_t index, std::int32_t pid, std::uint32_t generation);  // Free -> Starting
    // any -> Free; also frees every payer lease the slot's worker held (a worker killed mid-write
    // never keeps a payer wallet from the pool).
    void Release(std::uint32_t index);

    // Worker side (own slot only).
    void MarkIdle(std::uint32_t index);
    void MarkBusy(std::uint32_t index, std::int64_t now_ms);
    void MarkDraining(std::uint32_t index);
    // Ends a request: counts it in the slot and in the total, returns the slot's new count.
    std::uint64_t CountRequest(std::uint32_t index);
    // Counts a connection accepted from nginx (kept connections carry many requests each).
    void CountConnection();

    ScoreboardSummary Summarize() const;

    // How many slots are running an action for `key_tag` (non-zero) right now.
    std::uint32_t CountRunning(std::uint64_t key_tag) const;

    // How many slots wait on the chain node (Activity Chain or Receipt) right now.
    std::uint32_t CountChainBound() const;

    // A counter every worker bumps after a relayed write reaches the chain; each worker drops its
    // cached contract reads when it sees the counter move, so a write through one worker is seen
    // by the next request on any other (read-your-writes across the pool).
    std::atomic<std::uint64_t>& ChainEpoch();
    // 32 random bytes drawn when the supervisor creates the scoreboard: a secret of the pool's
    // processes (the sandbox never maps the scoreboard) for what they share through files, e.g.
    // the MAC of lowered action code in the shared code folder. A new supervisor draws a new one.
    ByteView CacheKey() const;

    // The pool's shared chain reads and event-watch state (common/shared_cache.h). Its 4 MiB are
    // memfd pages, allocated only as entries fill.
    SharedChainArea* ChainArea();

    // The pool-wide chain circuit (see SharedCircuit).
    SharedCircuit& ChainCircuit();
    const SharedCircuit& ChainCircuit() const;

    // The payer lease table: MAX_PAYERS owner words, one per API payer wallet, each 0 (free) or the
    // leasing worker's slot + 1. A relayed write claims a word by compare-and-swap and clears it when
    // its transaction is settled (workers/chain/payer_leases.h), so no two writes in flight ever share
    // a payer's nonce sequence.
    std::atomic<std::uint32_t>* PayerOwners();
    // How many payer words `slot` holds now (tests, /health).
    std::uint32_t PayersLeasedBy(std::uint32_t index) const;

private:
    struct Header;
    Scoreboard(UniqueFd fd, void* map, std::size_t size);
    Header* header() const;

    UniqueFd m_fd;
    void* m_map = nullptr;
    std::size_t m_size = 0;
};

}  // namespace sigil::common
