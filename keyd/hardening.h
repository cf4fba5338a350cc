// Process hardening for the key holder: no core dumps, no ptrace attach by peers, memory locked.
#pragma once

#include <string>

#include "common/result.h"

namespace sigil::keyd {

struct HardeningReport {
    bool memory_locked = false;  // mlockall succeeded (secrets never reach swap)
    std::string memory_note;     // why not, for the startup log
};

// Call first thing in main, before the root key is read.
//  * prctl(PR_SET_DUMPABLE, 0): no core dump, and processes of the same uid can neither ptrace
//    us nor read /proc/<pid>/mem (only CAP_SYS_PTRACE can).
//  * setrlimit(RLIMIT_CORE, 0): belt and braces if something resets the dumpable flag.
//  * mlockall(MCL_CURRENT | MCL_FUTURE) where it cannot starve us: only when RLIMIT_MEMLOCK is
//    unlimited or we run as root, since with a small limit MCL_FUTURE makes later allocations
//    fail. SecretBytes still mlock()s each secret when this is skipped.
// Errors: Internal "hardening_failed" when either of the first two fails (keyd must not run).
common::Status HardenProcess(HardeningReport* report);

}  // namespace sigil::keyd
