// Passing descriptors over unix sockets (SCM_RIGHTS): the one place that builds and parses the
// control message, for the FastCGI handoff pair and the sandbox zygote's control socket.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <span>
#include <vector>

#include "common/bytes.h"
#include "common/handles.h"

namespace sigil::common {

// Most descriptors one message carries (and one receive takes; the kernel closes any beyond).
constexpr std::size_t FD_PASSING_MAX = 4;

// Sends `payload` (at least one byte: a control message needs data to travel with) and `count`
// descriptors (0..FD_PASSING_MAX) in one sendmsg. `flags` are sendmsg flags (MSG_NOSIGNAL is
// always added; MSG_DONTWAIT for a non-blocking send). Retries EINTR.
// Returns true when the whole payload was sent; false otherwise (errno set; nothing is closed).
bool SendWithDescriptors(int sock, ByteView payload, const int* fds, std::size_t count, int flags = 0);

// What one recvmsg delivered.
struct ReceivedMessage {
    std::size_t size = 0;          // payload bytes written to the buffer (0 with !eof: empty datagram)
    bool eof = false;              // the peer closed (stream or seqpacket) and nothing was read
    bool truncated = false;        // MSG_TRUNC or MSG_CTRUNC: payload or descriptors were cut off
    std::vector<UniqueFd> fds;     // every descriptor received, close-on-exec, owned here
};

// Receives one message into `buf` (`flags`: recvmsg flags, e.g. MSG_DONTWAIT). Descriptors
// arrive close-on-exec and owned by the result, so a caller that did not expect them (or a
// truncated message) drops them by ignoring them. Retries EINTR.
// Returns false on a receive error (errno set; EAGAIN when MSG_DONTWAIT found nothing).
bool ReceiveWithDescriptors(int sock, std::span<std::uint8_t> buf, ReceivedMessage& out, int flags = 0);

}  // namespace sigil::common
