// Sandbox child's system-call filter: OpenSSH-style deny-by-default seccomp BPF.
#pragma once

#include "common/result.h"

namespace sigil::workers {

// Sets PR_SET_NO_NEW_PRIVS and installs the filter for the calling thread (and everything it
// could fork, though fork itself is refused). After this returns, the process may only:
//   read, write, readv, writev (any descriptor: the caller has closed all but its channel);
//   mmap and mprotect without PROT_EXEC, munmap, mremap, brk, madvise (memory);
//   rt_sigreturn, exit, exit_group, clock_gettime, gettimeofday (vDSO fallbacks), futex.
// Any other system call, and any call from a non-x86_64 ABI (including x32), kills the whole
// process with SIGSYS (SECCOMP_RET_KILL_PROCESS). Irreversible.
// Errors: Internal "seccomp_failed" when the kernel refuses prctl or the filter.
common::Status InstallSandboxSeccomp();

}  // namespace sigil::workers
