// The shared sandbox zygotes: a few sigil-sandbox processes the supervisor starts on one listening
// socket, to which every worker connects for its runs (workers/sandbox/zygote.h), instead of each
// worker starting its own (15-16.5 MiB private each).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/handles.h"
#include "common/result.h"
#include "supervisor/children.h"

namespace sigil::supervisor {

// The environment variable that gives workers the zygotes' address (workers/actions/sandbox_host.h
// reads it as ZYGOTE_SOCKET_ENV).
constexpr const char* ZYGOTE_SOCKET_ENV = "SIGIL_ZYGOTE_SOCKET";

// Zygotes when the config says 0: one per online CPU (a zygote only forks; the runs are the
// children's), at least 1, at most 64.
std::uint32_t DefaultZygoteCount(long online_cpus);

class ZygotePool {
public:
    // Opens the listening socket (SOCK_SEQPACKET, close-on-exec) at a random abstract address,
    // "@sigil-zygote-<pid>-<16 hex>". Abstract, not a path: nothing is left behind when the
    // supervisor is killed, and no directory must be writable. Anyone on the host can see the
    // name (/proc/net/unix), so the name is not the gate: each zygote refuses a peer whose uid is
    // not its own (SO_PEERCRED), and a process of our uid could ptrace the workers anyway.
    // Starts nothing yet (Tick does). Errors: Internal "zygote_socket".
    static common::Result<ZygotePool> Open(std::string sandbox_executable, std::uint32_t count);

    ZygotePool(ZygotePool&&) noexcept = default;
    ZygotePool& operator=(ZygotePool&&) noexcept = default;
    // Stop().
    ~ZygotePool();

    // "@name", what workers get in $SIGIL_ZYGOTE_SOCKET.
    const std::string& address() const { return m_address; }

    // Notices zygotes that died (reaping them), and starts missing ones: fork + exec of the
    // sandbox executable with the listening socket as descriptor 3, a readiness pipe's write end
    // as 4, /dev/null at 0, logs on 1 and 2, every other descriptor closed, an environment of nothing but glibc's malloc tunable and
    // sanitizer settings, default signal state, and death with the supervisor (PR_SET_PDEATHSIG).
    // Restarts follow the workers' RestartBackoff (zygotes that keep dying young wait longer).
    // Call before ChildPool::Reap, which reaps any child it does not know (a zygote's status is
    // then lost, its death still seen through its pidfd).
    void Tick(std::int64_t now_ms);

    // Waits up to `timeout_ms` until every zygote started so far is warm (it closes its readiness
    // pipe once preloaded and serving; a dead one counts too: Tick restarts it). True when all
    // `count` are running and warm. The supervisor starts its first workers after this, so their
    // first runs never wait for a zygote's warm-up.
    bool WaitReady(int timeout_ms);

    // SIGKILLs and reaps every zygote (call once no worker is left: their runs die with them).
    void Stop();

    // The running zygotes' pids.
    std::vector<pid_t> pids() const;

private:
    struct Running {
        pid_t pid = 0;
        common::UniqueFd pidfd;  // readable once the process ended, whoever reaped it
        common::UniqueFd ready;  // readiness pipe's read end until it reads EOF (warm), then closed
        std::int64_t started_ms = 0;
    };

    ZygotePool(common::UniqueFd listen, std::string address, std::string executable, std::uint32_t count)
        : m_listen(std::move(listen)), m_address(std::move(address)), m_executable(std::move(executable)),
          m_count(count) {}

    void ReapDead(std::int64_t now_ms);
    common::Status StartOne(std::int64_t now_ms);

    common::UniqueFd m_listen;
    std::string m_address;
    std::string m_executable;
    std::uint32_t m_count = 0;
    std::vector<Running> m_running;
    RestartBackoff m_backoff;
};

}  // namespace sigil::supervisor
