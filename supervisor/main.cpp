// sigil-supervisor: the FastCGI process manager. Usage: sigil-supervisor -c CONFIG [--check]
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log.h"
#include "supervisor/master.h"
#include "supervisor/options.h"

namespace {

constexpr int kExitUsage = 64;   // EX_USAGE
constexpr int kExitConfig = 78;  // EX_CONFIG: systemd should not restart-loop on this

int Usage() {
    std::fprintf(stderr,
                 "usage: sigil-supervisor -c CONFIG [--check]\n"
                 "  -c CONFIG  the Sigil configuration file (see sigil.conf.example)\n"
                 "  --check    validate the configuration and exit\n");
    return kExitUsage;
}

std::string SelfExe(const char* argv0) {
    char buf[PATH_MAX];
    const auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
    return argv0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string config_path;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            config_path = argv[++i];
        } else if (std::strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            return Usage();
        }
    }
    if (config_path.empty()) return Usage();
    sigil::common::SetLogComponent("supervisor");

    // Workers get the path as given; an absolute path keeps working if anyone changes directory.
    if (config_path[0] != '/') {
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) != nullptr) config_path = std::string(cwd) + "/" + config_path;
    }
    const std::string self = SelfExe(argv[0]);
    auto options = sigil::supervisor::LoadOptions(config_path, self);
    if (!options.ok()) {
        sigil::common::LogError(options.error().message);
        return kExitConfig;
    }
    if (check) {
        std::printf("%s: configuration ok\n", config_path.c_str());
        return 0;
    }
    return sigil::supervisor::RunMaster(std::move(options).value(), self);
}
