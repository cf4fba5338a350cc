#include "workers/fcgi/handoff.h"

#include <sys/socket.h>

#include <cstdint>

#include "common/fd_passing.h"

namespace sigil::workers {

bool SendConnection(int send_fd, int fd) {
    const std::uint8_t byte = 'c';  // a datagram needs a payload for the control message to travel
    return common::SendWithDescriptors(send_fd, common::ByteView(&byte, 1), &fd, 1, MSG_DONTWAIT);
}

int ReceiveConnection(int recv_fd) {
    std::uint8_t byte = 0;
    common::ReceivedMessage msg;
    if (!common::ReceiveWithDescriptors(recv_fd, std::span<std::uint8_t>(&byte, 1), msg, MSG_DONTWAIT)) return -1;
    // Anything but exactly one descriptor is dropped; the destructors close what came.
    if (msg.truncated || msg.fds.size() != 1) return -1;
    return msg.fds[0].Release();
}

}  // namespace sigil::workers
