#include "workers/fcgi/handoff.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sigil::workers {
namespace {

// Most descriptors one datagram carries (a receive buffer this size sees, and closes, the extras
// of a malformed datagram instead of leaving them truncated away).
constexpr std::size_t MAX_DESCRIPTORS = 4;

}  // namespace

bool SendDescriptors(int send_fd, const int* fds, std::size_t count) {
    if (count == 0 || count > MAX_DESCRIPTORS) return false;
    char byte = 'c';  // a datagram needs a payload for the control message to travel
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(MAX_DESCRIPTORS * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(count * sizeof(int));
    std::memcpy(CMSG_DATA(cm), fds, count * sizeof(int));
    ssize_t n;
    do {
        n = sendmsg(send_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == 1;
}

bool SendConnection(int send_fd, int fd) { return SendDescriptors(send_fd, &fd, 1); }

int ReceiveConnection(int recv_fd) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(MAX_DESCRIPTORS * sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = recvmsg(recv_fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -1;
    int got = -1;
    bool bad = (msg.msg_flags & MSG_CTRUNC) != 0;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (got < 0 && !bad) {
                got = fd;
            } else {
                bad = true;
                ::close(fd);
            }
        }
    }
    if (bad && got >= 0) {
        ::close(got);
        return -1;
    }
    return got;
}

}  // namespace sigil::workers
