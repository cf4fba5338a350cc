#include "supervisor/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace sigil::supervisor {
namespace {

volatile sig_atomic_t g_write_fd = -1;

void OnSignal(int sig) {
    const int saved = errno;  // the interrupted code may be about to read errno
    const unsigned char b = static_cast<unsigned char>(sig);
    if (g_write_fd >= 0) {
        // A full pipe drops the byte: the loop is already awake and will look at the state.
        [[maybe_unused]] const auto n = ::write(g_write_fd, &b, 1);
    }
    errno = saved;
}

}  // namespace

SignalPipe::~SignalPipe() {
    for (int sig : m_installed) ::signal(sig, SIG_DFL);
    g_write_fd = -1;
}

common::Status SignalPipe::Install(std::initializer_list<int> signals) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        return common::MakeError(common::ErrorKind::Internal, "signal_setup", std::string("pipe2: ") + std::strerror(errno));
    }
    m_read.Reset(p[0]);
    m_write.Reset(p[1]);
    g_write_fd = p[1];
    for (int sig : signals) {
        struct sigaction sa {};
        sa.sa_handler = OnSignal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = sig == SIGCHLD ? SA_NOCLDSTOP : 0;
        if (::sigaction(sig, &sa, nullptr) != 0) {
            return common::MakeError(common::ErrorKind::Internal, "signal_setup",
                                     std::string("sigaction: ") + std::strerror(errno));
        }
        m_installed.push_back(sig);
    }
    return common::Success();
}

std::vector<int> SignalPipe::Drain() {
    std::vector<int> out;
    unsigned char buf[64];
    for (;;) {
        const auto n = ::read(m_read.get(), buf, sizeof buf);
        if (n <= 0) break;
        out.insert(out.end(), buf, buf + n);
    }
    return out;
}

}  // namespace sigil::supervisor
