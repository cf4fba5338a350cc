#include "workers/fcgi_handoff.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sigil::workers {

bool SendConnection(int send_fd, int fd) {
    char byte = 'c';  // a datagram needs a payload for the control message to travel
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    ssize_t n;
    do {
        n = sendmsg(send_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n == 1;
}

int ReceiveConnection(int recv_fd) {
    char byte = 0;
    iovec iov{&byte, 1};
    // Room for more than one descriptor, so a malformed datagram's extras are received and closed
    // here rather than truncated away (MSG_CTRUNC would leak nothing, but we want to see them).
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
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
