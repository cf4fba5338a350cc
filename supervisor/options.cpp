#include "supervisor/options.h"

#include "supervisor/zygotes.h"

#include "common/payer_range.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

namespace sigil::supervisor {

std::uint32_t DefaultWorkerCount(long online_cpus) {
    const long n = std::clamp<long>(online_cpus, 1, 16) * 2;
    return static_cast<std::uint32_t>(std::clamp<long>(n, 2, 32));
}

common::Result<SupervisorOptions> OptionsFromConfig(const common::Config& config, const std::string& config_path,
                                                    const std::string& self_exe) {
    constexpr std::string_view S = "supervisor";
    SupervisorOptions o;
    o.config_path = config_path;
    o.socket_path = config.GetString(S, "socket_path");
    o.socket_mode = static_cast<unsigned>(config.GetInt(S, "socket_mode"));
    o.socket_group = config.GetString(S, "socket_group");
    const auto workers = config.GetInt(S, "workers");
    o.max_workers = static_cast<std::uint32_t>(config.GetInt(S, "max_workers"));
    o.workers = workers == 0 ? std::min(DefaultWorkerCount(::sysconf(_SC_NPROCESSORS_ONLN)), o.max_workers)
                             : static_cast<std::uint32_t>(workers);
    o.min_spare_workers = static_cast<std::uint32_t>(config.GetInt(S, "min_spare_workers"));
    o.max_spare_workers = static_cast<std::uint32_t>(config.GetInt(S, "max_spare_workers"));
    o.reserve_workers = static_cast<std::uint32_t>(config.GetInt(S, "reserve_workers"));
    const auto pool_sizes = [](const std::string& why) {
        return common::MakeError(common::ErrorKind::InvalidInput, "pool_sizes", "supervisor: " + why);
    };
    if (o.workers > o.max_workers) {
        return pool_sizes("workers (" + std::to_string(o.workers) + ") above max_workers (" +
                          std::to_string(o.max_workers) + ")");
    }
    if (o.min_spare_workers > o.max_spare_workers) {
        return pool_sizes("min_spare_workers (" + std::to_string(o.min_spare_workers) + ") above max_spare_workers (" +
                          std::to_string(o.max_spare_workers) + ")");
    }
    if (o.reserve_workers >= o.max_workers) {
        return pool_sizes("reserve_workers (" + std::to_string(o.reserve_workers) + ") must be below max_workers (" +
                          std::to_string(o.max_workers) + "), or no chain call could ever run");
    }
    // Every worker would refuse this share of the payers; refusing it here stops the start instead.
    if (auto share = common::PayerRangeFromConfig(config); !share.ok()) return share.error();
    o.max_requests = static_cast<std::uint64_t>(config.GetInt(S, "max_requests"));
    o.metrics = config.GetBool("metrics", "enabled");
    o.request_hard_timeout_ms = config.GetInt(S, "request_hard_timeout_s") * 1000;
    o.graceful_stop_timeout_ms = config.GetInt(S, "graceful_stop_timeout_s") * 1000;
    o.scoreboard_name = config.GetString(S, "scoreboard_name");
    o.worker_binary = config.GetString(S, "worker_binary");
    if (o.worker_binary.empty()) {
        const auto slash = self_exe.rfind('/');
        o.worker_binary = (slash == std::string::npos ? std::string(".") : self_exe.substr(0, slash)) + "/sigil-worker";
    }
    if (::access(o.worker_binary.c_str(), X_OK) != 0) {
        return common::MakeError(common::ErrorKind::InvalidInput, "worker_binary_missing",
                                 "supervisor.worker_binary: not an executable file: " + o.worker_binary);
    }
    const auto zygotes = config.GetInt(S, "zygotes");
    o.zygotes = zygotes == 0 ? DefaultZygoteCount(::sysconf(_SC_NPROCESSORS_ONLN)) : static_cast<std::uint32_t>(zygotes);
    // The same sigil-sandbox a worker would exec for itself: by default beside sigil-worker.
    o.sandbox_path = config.GetString("actions", "sandbox_path");
    if (o.sandbox_path.empty()) {
        const auto slash = o.worker_binary.rfind('/');
        o.sandbox_path = (slash == std::string::npos ? std::string(".") : o.worker_binary.substr(0, slash)) + "/sigil-sandbox";
    }
    // Without one (a worker binary from elsewhere, as in tests), no shared zygotes: each worker
    // then tries its own and reports the same missing sandbox itself.
    if (::access(o.sandbox_path.c_str(), X_OK) != 0) o.sandbox_path.clear();
    return o;
}

common::Result<SupervisorOptions> LoadOptions(const std::string& config_path, const std::string& self_exe) {
    auto text = common::Config::ReadText(config_path);
    if (!text.ok()) return text.error();
    auto config = common::Config::Parse(*text);
    if (!config.ok()) {
        return common::MakeError(common::ErrorKind::InvalidInput, "config_invalid", config_path + ": " + config.error().message);
    }
    auto options = OptionsFromConfig(*config, config_path, self_exe);
    if (!options.ok()) return options.error();
    options->config_text = std::move(text).value();
    return options;
}

common::Result<common::UniqueFd> ConfigSnapshot(const std::string& text) {
    const auto fail = [](const char* what) {
        return common::MakeError(common::ErrorKind::Internal, "config_snapshot", std::string(what) + ": " + std::strerror(errno));
    };
    common::UniqueFd fd(memfd_create("sigil-config", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid()) return fail("memfd_create");
    std::size_t done = 0;
    while (done < text.size()) {
        const auto n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n <= 0) return fail("write");
        done += static_cast<std::size_t>(n);
    }
    if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) return fail("seal");
    return fd;
}

}  // namespace sigil::supervisor
