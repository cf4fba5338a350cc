// The master loop: owns the listen socket and the scoreboard, keeps the pool at its size, and turns
// signals into reloads and stops (php-fpm's process control).
#pragma once

#include <string>

#include "supervisor/options.h"

namespace sigil::supervisor {

// Runs until SIGTERM, SIGINT or SIGQUIT and every worker has gone. Returns the process exit code:
// 0 after a clean stop, 1 if startup failed (socket, scoreboard, signals; logged).
//
// Signals: SIGHUP re-reads `options.config_path` (an invalid file is logged and ignored), starts a
// new generation of workers and sends SIGQUIT to the old ones (each finishes its in-flight request,
// then exits), so no request is refused. SIGTERM/SIGINT/SIGQUIT: remove the socket file, SIGQUIT
// every worker, SIGTERM after graceful_stop_timeout_s, SIGKILL 2 s later.
// Every ~200 ms: reap, restart dead workers (with RestartBackoff), SIGKILL workers busy longer than
// request_hard_timeout_s, and tell systemd (READY, STATUS, RELOADING, STOPPING, WATCHDOG).
int RunMaster(SupervisorOptions options, const std::string& self_exe);

}  // namespace sigil::supervisor
