// The worker processes: fork+exec with the listen socket on fd 0 (and the scoreboard, config
// snapshot and connection handoff pair on 3-6), reaping, draining, escalation,
// hard-timeout kills, and the crash-loop restart backoff.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/scoreboard.h"

namespace sigil::supervisor {

// What a child is started with.
struct SpawnSpec {
    std::string worker_binary;
    std::string config_path;
    int listen_fd = -1;  // becomes the child's fd 0
    int config_fd = -1;  // ConfigSnapshot; becomes the child's fd 4 ($SIGIL_CONFIG_FD)
    // The pool's connection handoff pair (workers/fcgi_handoff.h): fds 5 and 6
    // ($SIGIL_HANDOFF_SEND_FD, $SIGIL_HANDOFF_RECV_FD).
    int handoff_send_fd = -1;
    int handoff_recv_fd = -1;
    // The shared sandbox zygotes' address ($SIGIL_ZYGOTE_SOCKET); "" = each worker starts its own.
    std::string zygote_address;
    // The pool's shared counters (common/metrics.h), -1 = metrics off: fd 7 ($SIGIL_METRICS_FD).
    int metrics_fd = -1;
};

struct Child {
    pid_t pid = 0;
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
    std::int64_t started_ms = 0;
    std::int64_t quit_sent_ms = 0;  // 0 = still wanted; else SIGQUIT time (draining)
    std::int64_t term_sent_ms = 0;
    bool kill_sent = false;
    bool killed_stuck = false;      // SIGKILLed by the hard timeout
};

struct ChildExit {
    Child child;
    int status = 0;       // as from waitpid
    bool crashed = false; // died by a signal we did not send, or exited non-zero
};

// Grows the restart delay while workers keep dying young, so a broken binary or config does not
// fork-bomb the machine: 100 ms doubling to 10 s; reset once a worker lives past 2 s or exits 0.
class RestartBackoff {
public:
    void OnExit(const ChildExit& e, std::int64_t now_ms);
    bool Allowed(std::int64_t now_ms) const { return now_ms >= m_not_before_ms; }
    std::int64_t not_before_ms() const { return m_not_before_ms; }
    int streak() const { return m_streak; }

private:
    int m_streak = 0;
    std::int64_t m_not_before_ms = 0;
};

class ChildPool {
public:
    ChildPool(common::Scoreboard& scoreboard, SpawnSpec spec) : m_scoreboard(scoreboard), m_spec(std::move(spec)) {}

    void SetSpec(SpawnSpec spec) { m_spec = std::move(spec); }

    // Forks and execs one worker into a free scoreboard slot. Errors: Overloaded "no_free_slot",
    // Internal "fork_failed". Exec failures show up later as a crashed child (exit 127).
    common::Result<pid_t> Spawn(std::uint32_t generation, std::int64_t now_ms);

    // Reaps every exited child (never blocks), frees its slot, and reports how it ended.
    std::vector<ChildExit> Reap();

    // Children of `generation` that are not draining.
    std::uint32_t CountWanted(std::uint32_t generation) const;
    // Of those, the ones that are idle or still starting (a starting worker is about to be idle:
    // counting it keeps one burst from forking twice).
    std::uint32_t CountSpare(std::uint32_t generation) const;
    std::size_t size() const { return m_children.size(); }
    const std::map<pid_t, Child>& children() const { return m_children; }

    // Sends SIGQUIT (finish the current request, then exit) to every non-draining child whose
    // generation is below `generation` (UINT32_MAX: all of them).
    void Drain(std::uint32_t below_generation, std::int64_t now_ms);

    // Sends SIGQUIT to one idle, non-draining child of `generation` (the pool shrinking); false
    // when none is idle. A worker that took a request meanwhile finishes it first.
    bool DrainOneIdle(std::uint32_t generation, std::int64_t now_ms);

    // For draining children: SIGTERM once `graceful_ms` has passed since SIGQUIT, SIGKILL 2 s after that.
    void Escalate(std::int64_t now_ms, std::int64_t graceful_ms);

    // SIGKILLs every child whose current request started more than `hard_timeout_ms` ago.
    // Returns how many were killed.
    int KillStuck(std::int64_t now_ms, std::int64_t hard_timeout_ms);

private:
    std::optional<std::uint32_t> FreeSlot() const;
    void Quit(pid_t pid, Child& c, std::int64_t now_ms);

    common::Scoreboard& m_scoreboard;
    SpawnSpec m_spec;
    std::map<pid_t, Child> m_children;
};

}  // namespace sigil::supervisor
