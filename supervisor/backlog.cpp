#include "supervisor/backlog.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/handles.h"

namespace sigil::supervisor {

std::optional<std::uint32_t> PendingConnections(int listen_fd) {
    struct stat st {};
    if (::fstat(listen_fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
    common::UniqueFd nl(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (!nl.valid()) return std::nullopt;
    struct {
        nlmsghdr header;
        unix_diag_req request;
    } ask{};
    ask.header.nlmsg_len = sizeof ask;
    ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    ask.header.nlmsg_flags = NLM_F_REQUEST;
    ask.request.sdiag_family = AF_UNIX;
    ask.request.udiag_states = ~0U;
    ask.request.udiag_ino = static_cast<std::uint32_t>(st.st_ino);
    ask.request.udiag_show = UDIAG_SHOW_RQLEN;
    ask.request.udiag_cookie[0] = ask.request.udiag_cookie[1] = ~0U;  // no cookie: look up by inode
    if (::send(nl.get(), &ask, sizeof ask, 0) != static_cast<ssize_t>(sizeof ask)) return std::nullopt;
    alignas(nlmsghdr) char buf[1024];
    const ssize_t n = ::recv(nl.get(), buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (!NLMSG_OK(h, static_cast<std::uint32_t>(n)) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY) return std::nullopt;
    const auto* msg = static_cast<const unix_diag_msg*>(NLMSG_DATA(h));
    int left = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *msg));
    for (auto* a = reinterpret_cast<const rtattr*>(msg + 1); left > 0 && RTA_OK(a, left); a = RTA_NEXT(a, left)) {
        if (a->rta_type != UNIX_DIAG_RQLEN || RTA_PAYLOAD(a) < sizeof(unix_diag_rqlen)) continue;
        unix_diag_rqlen rq{};
        std::memcpy(&rq, RTA_DATA(a), sizeof rq);
        return rq.udiag_rqueue;  // for a listening socket: connections not yet accepted
    }
    return std::nullopt;
}

}  // namespace sigil::supervisor
