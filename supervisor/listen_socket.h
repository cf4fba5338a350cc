// The FastCGI listen socket: a unix stream socket nginx connects to, created by the master and
// inherited by every worker as descriptor 0 (FCGI_LISTENSOCK_FILENO).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

#include "common/handles.h"
#include "common/result.h"

namespace sigil::supervisor {

struct ListenSocketSpec {
    std::string path;
    unsigned mode = 0666;   // nginx started as root runs its workers as `nobody`: they must connect
    std::string group;      // if non-empty, chown the socket to this group
    int backlog = 511;
};

class ListenSocket {
public:
    // Binds and listens. The parent directory is created (0755) if missing. A leftover socket file
    // that nobody answers on is replaced; one that accepts connections means another supervisor is
    // running, and is refused. The descriptor is close-on-exec (children get it via dup2).
    // Errors: InvalidInput "socket_path" (too long for sun_path, or exists and is not a socket),
    // Conflict "socket_in_use", InvalidInput "socket_group" (unknown group),
    // Internal "socket_create" (socket, bind, chmod, chown or listen failed; message has errno).
    static common::Result<ListenSocket> Open(const ListenSocketSpec& spec);

    ListenSocket(ListenSocket&& o) noexcept;
    ListenSocket& operator=(ListenSocket&&) = delete;
    ~ListenSocket();

    int fd() const { return m_fd.get(); }
    const std::string& path() const { return m_path; }

    // Removes the socket file if it is still the one we created (same device and inode), so that
    // a newer supervisor's socket at the same path is never deleted. Closes our descriptor.
    void Close();

private:
    ListenSocket() = default;
    common::UniqueFd m_fd;
    std::string m_path;
    dev_t m_dev = 0;
    ino_t m_ino = 0;
};

}  // namespace sigil::supervisor
