// keyd's socket side: a private unix socket, peer-uid checks, and a single-threaded poll() loop
// that feeds each connection's frames to the KeyService.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/handles.h"
#include "common/result.h"
#include "keyd/key_service.h"
#include "keyd/stats.h"

namespace sigil::keyd {

struct ServerOptions {
    std::string socket_path;                 // at most 107 bytes (sockaddr_un)
    std::vector<uid_t> allowed_uids;         // SO_PEERCRED uid of every connection must be one of these
    std::optional<gid_t> socket_group;       // set: directory 0750 and socket 0660 owned by this group
    std::size_t max_connections = 64;        // beyond this a new connection is closed at once
    std::chrono::milliseconds frame_timeout{10000};  // a started frame or an unread reply must progress
    std::chrono::milliseconds idle_timeout{600000};  // a connection with nothing in flight may idle
    KeySourceKind key_source = KeySourceKind::File;  // reported by STATS
};

class Server {
public:
    Server(ServerOptions options, KeyService& service);
    ~Server();  // closes every connection and removes the socket it created
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Creates the socket directory if missing (0700, or 0750 with socket_group) and refuses an
    // existing one that is not a directory owned by us or that group/others can write; removes a
    // stale socket left by a crashed keyd but refuses one a live keyd still answers on; binds
    // (mode 0600, or 0660 with socket_group) and listens.
    // Errors: Internal "socket_path_invalid", "socket_dir_insecure", "socket_in_use",
    // "socket_failed" (the message has the system call and errno text).
    common::Status Listen();

    // Serves until RequestStop() (or a stop signal, see InstallStopSignals). Requests are answered
    // in order, one at a time per connection; a connection with an unsent reply is not read, so
    // no peer can make keyd buffer more than one frame each way.
    // Errors: Internal "socket_failed" if poll() itself fails.
    common::Status Run();

    // Async-signal-safe: writes one byte to the stop pipe.
    void RequestStop() const;

    // SIGTERM and SIGINT call RequestStop(); SIGHUP is ignored (keyd logs to stderr, so there is
    // no log file to reopen, and a stray HUP must not kill the key holder); SIGPIPE is ignored
    // (writes use MSG_NOSIGNAL anyway). This server must outlive its use of the handlers.
    void InstallStopSignals() const;

private:
    struct Connection;
    void AcceptAll();
    bool ReadSome(Connection& c);
    bool Flush(Connection& c);
    bool Process(Connection& c);
    bool Expired(const Connection& c, std::chrono::steady_clock::time_point now) const;
    // STATS is about the server (connections, timing), so the server answers it, not KeyService.
    common::SecretBuffer Answer(common::ByteView payload);

    ServerOptions m_options;
    KeyService& m_service;
    common::UniqueFd m_listen;
    common::UniqueFd m_stop_read;
    common::UniqueFd m_stop_write;
    bool m_bound = false;
    std::vector<std::unique_ptr<Connection>> m_connections;
    StatsRecorder m_stats;
};

}  // namespace sigil::keyd
