// The zygote's control channel: the messages between a worker's host (workers/actions/
// sandbox_host) and its sigil-sandbox zygote, and the two calls that move them.
//
// Transport: one AF_UNIX SOCK_SEQPACKET connection per worker: to a shared zygote's listening
// socket (the supervisor's, address in $SIGIL_ZYGOTE_SOCKET), or a socketpair with the worker's
// own zygote, whose end is descriptor ZYGOTE_CONTROL_FD of the exec'd sigil-sandbox. One packet =
// one frame of common/ipc_frame (length:u32 big-endian || type:u8 || field*), integers as 8-byte
// fields.
//
// Messages:
//   SPAWN{}                  worker -> zygote, carries exactly one descriptor (SCM_RIGHTS): the
//                            child's end of a fresh op channel; answered by SPAWNED
//   SPAWNED{pid}             zygote -> worker, pid of the forked child, -1 when fork failed
//   KILL{pid}                worker -> zygote, SIGKILL pid if it is one of the zygote's unreaped
//                            children (so a recycled pid is never hit); no answer
//   EXITED{pid, status}      zygote -> worker, a child was reaped; status as from waitpid
// Everything is per connection: KILL reaches only the connection's own children, EXITED goes to
// the connection that spawned the child. A connection closing is the zygote's signal to kill its
// children (and, for a worker's own zygote, to exit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/bytes.h"
#include "common/handles.h"
#include "common/result.h"

namespace sigil::workers {

// The descriptor number of the control socket in sigil-sandbox (after 0, 1, 2).
constexpr int ZYGOTE_CONTROL_FD = 3;
// A shared zygote's readiness: the write end of a pipe from its starter, closed once the zygote is
// warm (preloaded, serving), so the supervisor starts its workers on zygotes that answer at once.
constexpr int ZYGOTE_READY_FD = 4;

// Connections one shared zygote serves at once (more are accepted and closed at once), and the
// unreaped children one connection may have (a worker runs one action at a time; beyond, SPAWNED
// -1): a worker that floods forks cannot starve the others.
constexpr std::size_t ZYGOTE_MAX_CONNECTIONS = 4096;
constexpr std::size_t ZYGOTE_MAX_CHILDREN_PER_CONNECTION = 16;

enum class ZygoteControlType : std::uint8_t { Spawn = 1, Spawned = 2, Kill = 3, Exited = 4 };

struct ZygoteControl {
    ZygoteControlType type = ZygoteControlType::Spawn;
    std::int32_t pid = 0;     // Spawned, Kill, Exited
    std::int32_t status = 0;  // Exited
    std::uint64_t cpu_us = 0;  // Exited: the child's user + system CPU time (wait4), microseconds
};

// The complete frame of one message.
common::Bytes EncodeZygoteControl(const ZygoteControl& message);

// Decodes one packet (a whole frame, header included).
// Errors: InvalidInput "malformed_message" (a length header that is not the packet's, an unknown
// type, missing, extra or wrongly sized fields, a pid outside what the type allows: SPAWNED -1 or
// > 0, KILL and EXITED > 0).
common::Result<ZygoteControl> DecodeZygoteControl(common::ByteView packet);

// A received message and the descriptor that came with it (SPAWN only).
struct ReceivedControl {
    ZygoteControl message;
    common::UniqueFd passed;
};

// Sends one message (with `pass_fd` for SPAWN, -1 otherwise), blocking. False when the peer is gone.
bool SendZygoteControl(int control_fd, const ZygoteControl& message, int pass_fd = -1);

// Receives one message, blocking. nullopt when the peer closed.
// Errors: Unavailable "control_failed" (receive error), InvalidInput "malformed_message" (a bad
// packet, a descriptor on anything but SPAWN, SPAWN without exactly one; the descriptors that came
// with it are closed).
common::Result<std::optional<ReceivedControl>> ReceiveZygoteControl(int control_fd);

}  // namespace sigil::workers
