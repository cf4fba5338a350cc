#include "supervisor/listen_socket.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sigil::supervisor {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Error SysError(const std::string& what) {
    return MakeError(ErrorKind::Internal, "socket_create", what + ": " + std::strerror(errno));
}

bool SomeoneListens(const sockaddr_un& addr) {
    common::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe.valid()) return false;
    return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

common::Result<ListenSocket> ListenSocket::Open(const ListenSocketSpec& spec) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (spec.path.empty() || spec.path.size() >= sizeof addr.sun_path) {
        return MakeError(ErrorKind::InvalidInput, "socket_path", "socket path empty or longer than 107 bytes: " + spec.path);
    }
    std::memcpy(addr.sun_path, spec.path.c_str(), spec.path.size() + 1);

    const auto slash = spec.path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
        const std::string dir = spec.path.substr(0, slash);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return SysError("mkdir " + dir);
    }

    struct stat st {};
    if (::lstat(spec.path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            return MakeError(ErrorKind::InvalidInput, "socket_path", spec.path + " exists and is not a socket");
        }
        if (SomeoneListens(addr)) {
            return MakeError(ErrorKind::Conflict, "socket_in_use", "another process serves " + spec.path);
        }
        ::unlink(spec.path.c_str());
    }

    gid_t gid = static_cast<gid_t>(-1);
    if (!spec.group.empty()) {
        const group* g = ::getgrnam(spec.group.c_str());
        if (g == nullptr) return MakeError(ErrorKind::InvalidInput, "socket_group", "unknown group " + spec.group);
        gid = g->gr_gid;
    }

    ListenSocket ls;
    ls.m_fd.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!ls.m_fd.valid()) return SysError("socket");
    // bind() applies the umask; chmod afterwards sets exactly the configured mode.
    if (::bind(ls.m_fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return SysError("bind " + spec.path);
    ls.m_path = spec.path;
    if (::chmod(spec.path.c_str(), spec.mode) != 0) return SysError("chmod " + spec.path);
    if (gid != static_cast<gid_t>(-1) && ::chown(spec.path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
        return SysError("chown " + spec.path);
    }
    if (::stat(spec.path.c_str(), &st) != 0) return SysError("stat " + spec.path);
    ls.m_dev = st.st_dev;
    ls.m_ino = st.st_ino;
    if (::listen(ls.m_fd.get(), spec.backlog) != 0) return SysError("listen");
    return ls;
}

ListenSocket::ListenSocket(ListenSocket&& o) noexcept
    : m_fd(std::move(o.m_fd)), m_path(std::exchange(o.m_path, {})), m_dev(o.m_dev), m_ino(o.m_ino) {}

ListenSocket::~ListenSocket() { Close(); }

void ListenSocket::Close() {
    if (!m_path.empty()) {
        struct stat st {};
        if (::lstat(m_path.c_str(), &st) == 0 && st.st_dev == m_dev && st.st_ino == m_ino) ::unlink(m_path.c_str());
        m_path.clear();
    }
    m_fd.Reset();
}

}  // namespace sigil::supervisor
