// How many connections wait in a listening unix socket's accept queue (the kernel's sock_diag, as
// `ss -xl` shows in Recv-Q): requests nginx has passed that no worker has taken yet, which tells
// the pool how many workers to fork at once.
#pragma once

#include <cstdint>
#include <optional>

namespace sigil::supervisor {

// The accept queue's length for `listen_fd` (a listening AF_UNIX socket); nullopt when the kernel
// does not tell (no unix_diag, or `listen_fd` is not such a socket).
std::optional<std::uint32_t> PendingConnections(int listen_fd);

}  // namespace sigil::supervisor
