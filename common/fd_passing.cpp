#include "common/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace sigil::common {

bool SendWithDescriptors(int sock, ByteView payload, const int* fds, std::size_t count, int flags) {
    if (payload.empty() || count > FD_PASSING_MAX) {
        errno = EINVAL;
        return false;
    }
    iovec iov{const_cast<std::uint8_t*>(payload.data()), payload.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(FD_PASSING_MAX * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (count > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
        cmsghdr* cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(count * sizeof(int));
        std::memcpy(CMSG_DATA(cm), fds, count * sizeof(int));
    }
    ssize_t n;
    do {
        n = ::sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(payload.size());
}

bool ReceiveWithDescriptors(int sock, std::span<std::uint8_t> buf, ReceivedMessage& out, int flags) {
    out = ReceivedMessage{};
    iovec iov{buf.data(), buf.size()};
    // Room for FD_PASSING_MAX. The kernel drops (closes) descriptors beyond it and sets
    // MSG_CTRUNC, which the caller sees as `truncated`; the ones that fit are owned by `out`.
    alignas(cmsghdr) char control[CMSG_SPACE(FD_PASSING_MAX * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return false;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            out.fds.emplace_back(fd);
        }
    }
    out.size = static_cast<std::size_t>(n);
    out.truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    out.eof = n == 0 && out.fds.empty();
    return true;
}

}  // namespace sigil::common
