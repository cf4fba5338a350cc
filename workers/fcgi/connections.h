// The connections one worker watches: the shared listen socket and handoff queue (both with
// EPOLLEXCLUSIVE, so the kernel wakes one idle worker per event instead of every idle worker),
// its signalfd, and the idle kept connections it holds.
//
// While the worker serves a request it keeps holding its other connections: most requests take
// well under a millisecond, and passing connections around costs more than the connect/accept it
// saves. A request that runs longer than HANDOFF_AFTER_NS (2 ms) is another matter, since nginx
// may write the next request on one of those connections: a helper thread then looks every 2 ms
// and hands each connection with a request waiting to the pool (fcgi_handoff.h), so no request
// waits behind another for more than about that long.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "common/handles.h"
#include "common/scoreboard.h"

namespace sigil::workers {

class Connections {
public:
    // A request running longer than this makes the helper pass on waiting connections.
    static constexpr std::int64_t HANDOFF_AFTER_NS = 2'000'000;
    // While busy past HANDOFF_AFTER_NS with idle kept connections, the helper waits on them this long
    // at a time (a request written on one wakes it at once).
    static constexpr int HELD_LOOK_MS = 100;

    // handoff_send/handoff_recv: the pool's pair, or -1 (no handoff and no helper thread).
    // `scoreboard` (optional) counts accepted connections.
    Connections(int listen_fd, int handoff_send, int handoff_recv, common::Scoreboard* scoreboard);
    ~Connections();  // stops the helper, closes what is still held
    Connections(const Connections&) = delete;
    Connections& operator=(const Connections&) = delete;

    // Creates the epoll set (listen socket, `signal_fd`, handoff queue) and starts the helper.
    // False with errno set on failure.
    bool Open(int signal_fd);
    int epoll_fd() const { return m_epoll.get(); }
    bool IsListen(int fd) const { return fd == m_listen; }
    bool IsHandoff(int fd) const { return m_recv >= 0 && fd == m_recv; }

    // A new connection from nginx, now held; -1 when another worker took it.
    int AcceptOne();
    // A connection from the pool's queue, now held; -1 when the queue is empty.
    int ReceiveOne();
    // True when nginx has written a request on `fd`; drops the connection when nginx closed it.
    bool HasRequest(int fd);
    // Sends one held connection to the pool (kept when the queue cannot take it).
    void HandOff(int fd);
    // nginx closed a connection (idle, or abandoning a request whose client went away).
    void Drop(int fd);
    // The connection about to be served: the helper must not touch it. False when the helper has
    // just handed it off (someone else serves it).
    bool Take(int fd);
    // After a request: libfcgi left the connection open (nginx keeps it), so hold it again.
    void Return(int fd);
    // Marks the start (true) and end (false) of a request; the start arms the helper's timer.
    void SetBusy(bool busy);
    // On exit: every held connection to the pool (the workers that stay, or a new generation).
    void HandOffAll();

private:
    bool Hold(int fd);
    bool Watch(int fd, std::uint32_t events);
    bool Forget(int fd);
    void HandOffHeldLocked();
    void HandOffWaitingLocked();
    bool SendOrKeepLocked(int fd);
    void HelperLoop();
    void OnTimer();
    void Arm(std::int64_t ns);
    void StopHelper();

    int m_listen;
    int m_send;
    int m_recv;
    common::Scoreboard* m_scoreboard;
    common::UniqueFd m_epoll;
    std::mutex m_mu;
    std::vector<int> m_held;  // idle connections (not the one being served); guarded by m_mu
    common::UniqueFd m_timer;  // timerfd the helper sleeps on
    std::atomic<std::int64_t> m_busy_since{0};  // CLOCK_MONOTONIC ns when the current request began; 0 = idle
    std::atomic<bool> m_timer_armed{false};
    std::atomic<bool> m_stop{false};
    std::thread m_helper;
};

}  // namespace sigil::workers
