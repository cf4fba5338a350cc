// The supervisor's settings, taken from the [supervisor] section of the shared config file.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/handles.h"
#include "common/result.h"

namespace sigil::supervisor {

struct SupervisorOptions {
    std::string config_path;       // passed on to every worker (-c)
    std::string socket_path;
    unsigned socket_mode = 0666;
    std::string socket_group;
    std::uint32_t workers = 1;     // resolved: never 0; started at start, and the pool's floor
    // The dynamic pool (php-fpm's pm = dynamic): it grows while fewer than min_spare_workers are
    // idle, up to max_workers, and shrinks while more than max_spare_workers are idle, down to workers.
    std::uint32_t max_workers = 256;  // >= workers
    std::uint32_t min_spare_workers = 4;
    std::uint32_t max_spare_workers = 16;  // >= min_spare_workers
    std::uint32_t reserve_workers = 8;     // < max_workers (the workers read it themselves)
    std::uint64_t max_requests = 100000;
    std::int64_t request_hard_timeout_ms = 60000;
    std::int64_t graceful_stop_timeout_ms = 10000;
    std::string scoreboard_name;
    std::string worker_binary;     // resolved absolute path
    std::uint32_t zygotes = 1;     // resolved: never 0
    std::string sandbox_path;      // [actions] sandbox_path, resolved: "" = none beside the worker binary
    bool metrics = true;           // [metrics] enabled: the shared counters for /metrics
    std::string config_text;       // the exact text validated (workers get this, not the file)
};

// Workers when the config says 0: two per online CPU, at least 2, at most 32 (beyond that the
// pool only adds memory; the machine's cores are the limit for CPU-bound runs).
std::uint32_t DefaultWorkerCount(long online_cpus);

// Builds the options from a parsed config. `self_exe` is the supervisor's own path (for the
// default worker_binary: "sigil-worker" in the same directory). workers = 0 resolves to
// DefaultWorkerCount, at most max_workers.
// Errors: InvalidInput "worker_binary_missing" when the worker binary is not an executable file;
// InvalidInput "pool_sizes" when workers > max_workers, min_spare_workers > max_spare_workers or
// reserve_workers >= max_workers (no chain call could ever run).
common::Result<SupervisorOptions> OptionsFromConfig(const common::Config& config, const std::string& config_path,
                                                    const std::string& self_exe);

// Reads and validates the config file, then builds the options (config_text included). Errors:
// those of Config::ReadText, Config::Parse (message prefixed with the path) and OptionsFromConfig.
common::Result<SupervisorOptions> LoadOptions(const std::string& config_path, const std::string& self_exe);

// A sealed, read-only memfd holding `text`: workers read the configuration the supervisor
// validated, so a file edited later (or broken before a refused reload) never reaches them.
// Errors: Internal "config_snapshot" (memfd, write or seal failed).
common::Result<common::UniqueFd> ConfigSnapshot(const std::string& text);

}  // namespace sigil::supervisor
