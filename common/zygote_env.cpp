#include "common/zygote_env.h"

#include <string_view>

extern char** environ;

namespace sigil::common {

std::vector<std::string> ZygoteEnvironment() {
    std::vector<std::string> env{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"};
    // Every symbol bound at exec, in the zygote: with lazy binding each child resolved the library
    // calls only it makes (lockdown's setrlimit, prctl, seccomp) itself, each a symbol lookup and a
    // copy-on-write fault on a GOT page (issue 27: 14 faults and about 1 ms of CPU per run).
    env.emplace_back("LD_BIND_NOW=1");
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view v = *e;
        for (const char* prefix : {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", "TSAN_OPTIONS="}) {
            if (v.rfind(prefix, 0) == 0) env.emplace_back(v);
        }
    }
    return env;
}

}  // namespace sigil::common
