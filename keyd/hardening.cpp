#include "keyd/hardening.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sigil::keyd {

common::Status HardenProcess(HardeningReport* report) {
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        return common::MakeError(common::ErrorKind::Internal, "hardening_failed",
                                 std::string("prctl(PR_SET_DUMPABLE): ") + std::strerror(errno));
    }
    const struct rlimit no_core {0, 0};
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0) {
        return common::MakeError(common::ErrorKind::Internal, "hardening_failed",
                                 std::string("setrlimit(RLIMIT_CORE): ") + std::strerror(errno));
    }
    HardeningReport local;
    HardeningReport& r = report != nullptr ? *report : local;
    struct rlimit memlock {};
    const bool can_lock_all =
        ::geteuid() == 0 || (::getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 && memlock.rlim_cur == RLIM_INFINITY);
    if (!can_lock_all) {
        r.memory_note = "RLIMIT_MEMLOCK is limited and we are not root; locking each secret instead";
    } else if (::mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
        r.memory_locked = true;
    } else {
        r.memory_note = std::string("mlockall: ") + std::strerror(errno) + "; locking each secret instead";
    }
    return common::Success();
}

}  // namespace sigil::keyd
