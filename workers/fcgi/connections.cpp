#include "workers/fcgi/connections.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "common/clock.h"
#include "workers/fcgi/handoff.h"

namespace sigil::workers {

Connections::Connections(int listen_fd, int handoff_send, int handoff_recv, common::Scoreboard* scoreboard)
    : m_listen(listen_fd), m_send(handoff_send), m_recv(handoff_recv), m_scoreboard(scoreboard) {}

Connections::~Connections() {
    StopHelper();
    for (int fd : m_held) ::close(fd);
}

bool Connections::Open(int signal_fd) {
    m_epoll = common::UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (!m_epoll.valid()) return false;
    if (!Watch(m_listen, EPOLLIN | EPOLLEXCLUSIVE) || !Watch(signal_fd, EPOLLIN)) return false;
    if (m_recv < 0) return true;
    if (!Watch(m_recv, EPOLLIN | EPOLLEXCLUSIVE)) return false;
    m_timer = common::UniqueFd(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    if (!m_timer.valid()) return false;
    m_helper = std::thread([this] { HelperLoop(); });
    return true;
}

int Connections::AcceptOne() {
    const int fd = accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return -1;
    if (m_scoreboard != nullptr) m_scoreboard->CountConnection();
    return Hold(fd) ? fd : -1;
}

int Connections::ReceiveOne() {
    const int fd = ReceiveConnection(m_recv);
    return fd >= 0 && Hold(fd) ? fd : -1;
}

bool Connections::HasRequest(int fd) {
    char byte;
    const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return true;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) Drop(fd);
    return false;
}

void Connections::HandOff(int fd) {
    std::lock_guard lock(m_mu);
    if (m_send < 0 || !Forget(fd)) return;
    if (!SendOrKeepLocked(fd)) m_held.push_back(fd);
}

void Connections::Drop(int fd) {
    {
        std::lock_guard lock(m_mu);
        if (!Forget(fd)) return;  // the helper already handed it off
    }
    epoll_ctl(m_epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
}

bool Connections::Take(int fd) {
    std::lock_guard lock(m_mu);
    return Forget(fd);
}

void Connections::Return(int fd) {
    // Normally the descriptor that was taken (still registered); libfcgi's own retry after a
    // broken connection may have accepted another one.
    if (!Watch(fd, EPOLLIN | EPOLLRDHUP)) {
        ::close(fd);
        return;
    }
    std::lock_guard lock(m_mu);
    m_held.push_back(fd);
}

void Connections::SetBusy(bool busy) {
    if (!busy) {
        m_busy_since.store(0);
        return;
    }
    m_busy_since.store(common::MonotonicNs());
    if (m_timer.valid() && !m_timer_armed.exchange(true)) Arm(HANDOFF_AFTER_NS);
}

void Connections::HandOffAll() {
    {
        std::lock_guard lock(m_mu);
        HandOffHeldLocked();
    }
    StopHelper();
}

// A new connection from the listen socket or the handoff queue; its request (if any) shows up as
// EPOLLIN on a later wait.
bool Connections::Hold(int fd) {
    if (!Watch(fd, EPOLLIN | EPOLLRDHUP)) {
        ::close(fd);
        return false;
    }
    std::lock_guard lock(m_mu);
    m_held.push_back(fd);
    return true;
}

bool Connections::Watch(int fd, std::uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, fd, &ev) == 0) return true;
    return errno == EEXIST;
}

bool Connections::Forget(int fd) {
    const auto it = std::find(m_held.begin(), m_held.end(), fd);
    if (it == m_held.end()) return false;
    m_held.erase(it);
    return true;
}

// Sends every held connection to the pool's queue; one the queue cannot take stays held.
void Connections::HandOffHeldLocked() {
    if (m_send < 0) return;
    std::vector<int> still;
    for (int fd : m_held) {
        if (!SendOrKeepLocked(fd)) still.push_back(fd);
    }
    m_held.swap(still);
}

// Sends the held connections on which nginx has written a request to the pool; idle ones stay
// (passing them around costs more than holding them).
void Connections::HandOffWaitingLocked() {
    if (m_send < 0 || m_held.empty()) return;
    std::vector<pollfd> fds;
    fds.reserve(m_held.size());
    for (int fd : m_held) fds.push_back(pollfd{fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 0) <= 0) return;
    std::vector<int> still;
    for (const pollfd& p : fds) {
        const bool waiting = (p.revents & POLLIN) != 0 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) == 0;
        if (!waiting || !SendOrKeepLocked(p.fd)) still.push_back(p.fd);
    }
    m_held.swap(still);
}

// Sends `fd` (no longer in m_held) to the queue; false when the queue cannot take it.
bool Connections::SendOrKeepLocked(int fd) {
    if (!SendConnection(m_send, fd)) return false;
    // Deregister before closing: the descriptor in flight keeps the connection (and so this epoll
    // registration) alive after our close.
    epoll_ctl(m_epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    return true;
}

// The helper sleeps on a timer that only a request arms: an idle worker costs nothing, and a busy
// one wakes it at most every HANDOFF_AFTER_NS.
void Connections::HelperLoop() {
    std::uint64_t expirations = 0;
    while (read(m_timer.get(), &expirations, sizeof expirations) == static_cast<ssize_t>(sizeof expirations) ||
           errno == EINTR) {
        if (m_stop.load()) return;
        OnTimer();
    }
}

void Connections::OnTimer() {
    for (;;) {
        if (m_stop.load()) return;
        const std::int64_t since = m_busy_since.load();
        if (since != 0) {
            const std::int64_t elapsed = common::MonotonicNs() - since;
            if (elapsed < HANDOFF_AFTER_NS) {
                Arm(HANDOFF_AFTER_NS - elapsed);
                return;
            }
            std::vector<pollfd> held;
            {
                std::lock_guard lock(m_mu);
                HandOffWaitingLocked();
                for (int fd : m_held) held.push_back(pollfd{fd, POLLIN | POLLRDHUP, 0});
            }
            if (!held.empty()) {
                // Idle kept connections stay with this worker: sleep until nginx writes a request on
                // one of them (handed off at once on the next pass) or HELD_LOOK_MS pass. Polling on
                // a 2 ms timer instead cost every busy worker 500 wake-ups a second, and with
                // hundreds of runs waiting on the network that was most of the machine's CPU.
                const int n = poll(held.data(), held.size(), HELD_LOOK_MS);
                bool request_waiting = false;
                for (const pollfd& p : held) {
                    if ((p.revents & POLLIN) != 0 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) == 0) request_waiting = true;
                }
                if (request_waiting || n == 0) continue;
                // Only hang-ups (the main loop drops those): look again later rather than spin.
                Arm(std::int64_t{HELD_LOOK_MS} * 1000000);
                return;
            }
            // Nothing held: no request can reach this worker before it is free, so nothing to look
            // at until the next request arms the timer.
        }
        m_timer_armed.store(false);
        // A request that started after our look saw the timer armed and did not arm it.
        const std::int64_t again = m_busy_since.load();
        if (again == 0 || again == since || m_timer_armed.exchange(true)) return;
    }
}

void Connections::Arm(std::int64_t ns) {
    itimerspec t{};
    t.it_value.tv_sec = ns / 1000000000;
    t.it_value.tv_nsec = std::max<std::int64_t>(ns % 1000000000, 1);
    timerfd_settime(m_timer.get(), 0, &t, nullptr);
}

void Connections::StopHelper() {
    if (!m_helper.joinable()) return;
    m_stop.store(true);
    Arm(1);
    m_helper.join();
}

}  // namespace sigil::workers
