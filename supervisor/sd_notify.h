// systemd notification (sd_notify protocol) without libsystemd: one datagram to $NOTIFY_SOCKET.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sigil::supervisor {

// Sends `state` (newline-separated assignments such as "READY=1\nSTATUS=4 workers") to the socket
// named by $NOTIFY_SOCKET: a filesystem path, or an abstract name when it starts with '@'.
// Returns false if the variable is unset (not under systemd) or the send failed; callers ignore
// failures, since notification is advisory.
bool SdNotify(std::string_view state);

// Same, with an explicit socket address instead of $NOTIFY_SOCKET (for tests).
bool SdNotifyTo(const std::string& socket_name, std::string_view state);

// Interval at which WATCHDOG=1 must be sent: half of $WATCHDOG_USEC, in milliseconds, or 0 when
// the watchdog is off ($WATCHDOG_USEC unset or invalid, or $WATCHDOG_PID names another process).
std::int64_t WatchdogIntervalMs();

}  // namespace sigil::supervisor
