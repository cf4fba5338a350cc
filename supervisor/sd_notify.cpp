#include "supervisor/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "common/handles.h"

namespace sigil::supervisor {

bool SdNotifyTo(const std::string& socket_name, std::string_view state) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_name.size() < 2 || socket_name.size() >= sizeof addr.sun_path) return false;
    if (socket_name[0] != '/' && socket_name[0] != '@') return false;
    std::memcpy(addr.sun_path, socket_name.data(), socket_name.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_name.size());
    if (socket_name[0] == '@') {
        addr.sun_path[0] = '\0';  // abstract namespace: the length, not a NUL, ends the name
    } else {
        ++len;                   // include the terminating NUL of a path
    }
    common::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return false;
    const auto n = ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), len);
    return n == static_cast<ssize_t>(state.size());
}

bool SdNotify(std::string_view state) {
    const char* name = std::getenv("NOTIFY_SOCKET");
    if (name == nullptr) return false;
    return SdNotifyTo(name, state);
}

std::int64_t WatchdogIntervalMs() {
    const char* usec = std::getenv("WATCHDOG_USEC");
    if (usec == nullptr) return 0;
    const char* pid = std::getenv("WATCHDOG_PID");
    if (pid != nullptr && std::strtoll(pid, nullptr, 10) != static_cast<long long>(::getpid())) return 0;
    char* end = nullptr;
    const long long v = std::strtoll(usec, &end, 10);
    if (end == usec || *end != '\0' || v <= 0) return 0;
    const std::int64_t ms = v / 2000;
    return ms > 0 ? ms : 1;
}

}  // namespace sigil::supervisor
