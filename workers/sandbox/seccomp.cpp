#include "workers/sandbox/seccomp.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sigil::workers {

namespace {

#if !defined(__x86_64__)
#error "the sandbox filter is written for x86_64 only"
#endif

constexpr unsigned X32_SYSCALL_BIT = 0x40000000;

// Sanitizer builds (SIGIL_SANITIZE) run ASan's runtime inside the child, which installs an
// alternate signal stack on its first allocations; release builds never allow these.
#if defined(__SANITIZE_ADDRESS__)
#define SIGIL_SANDBOX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIGIL_SANDBOX_SANITIZED 1
#endif
#endif

// Filter fragments in the style of OpenSSH's sandbox-seccomp-filter.c.
#define SC_LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define SC_ALLOW(syscall_nr)                                   \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (syscall_nr), 0, 1),     \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
// Allow `nr` only when the low 32 bits of argument `arg` have none of the bits in `mask` set;
// leaves the syscall number reloaded in the accumulator either way.
#define SC_ALLOW_ARG_NOT_MASK(syscall_nr, arg, mask)                                    \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (syscall_nr), 0, 4),                            \
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[(arg)])), \
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (mask), 1, 0),                         \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                               \
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

const sock_filter FILTER[] = {
    // Wrong architecture: the syscall numbers below would mean something else.
    SC_LOAD(arch),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    SC_LOAD(nr),
    // x32 shares AUDIT_ARCH_X86_64 but sets this bit in the number.
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    SC_ALLOW(__NR_read),
    SC_ALLOW(__NR_write),
    SC_ALLOW(__NR_readv),
    SC_ALLOW(__NR_writev),
    // Executable memory would let an exploit run injected code without a JIT to blame.
    SC_ALLOW_ARG_NOT_MASK(__NR_mmap, 2, PROT_EXEC),
    SC_ALLOW_ARG_NOT_MASK(__NR_mprotect, 2, PROT_EXEC),
    SC_ALLOW(__NR_munmap),
    SC_ALLOW(__NR_mremap),
    SC_ALLOW(__NR_brk),
    SC_ALLOW(__NR_madvise),
    // SecretBytes locks key material out of swap (RLIMIT_MEMLOCK still caps it).
    SC_ALLOW(__NR_mlock),
    SC_ALLOW(__NR_munlock),
    SC_ALLOW(__NR_rt_sigreturn),
    SC_ALLOW(__NR_exit),
    SC_ALLOW(__NR_exit_group),
    SC_ALLOW(__NR_clock_gettime),
    SC_ALLOW(__NR_gettimeofday),
    SC_ALLOW(__NR_futex),
    SC_ALLOW(__NR_getrandom),  // crypto.getRandomValues (web_globals.cpp)
    SC_ALLOW(__NR_close),      // the channel, closed after DONE so the worker need not await the exit
#if defined(SIGIL_SANDBOX_SANITIZED)
    SC_ALLOW(__NR_sigaltstack),
#endif
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

#undef SC_LOAD
#undef SC_ALLOW
#undef SC_ALLOW_ARG_NOT_MASK

common::Error Failed(const char* what) {
    return common::MakeError(common::ErrorKind::Internal, "seccomp_failed",
                             std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

common::Status InstallSandboxSeccomp() {
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(sizeof(FILTER) / sizeof(FILTER[0]));
    prog.filter = const_cast<sock_filter*>(FILTER);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Failed("PR_SET_NO_NEW_PRIVS");
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return Failed("seccomp");
    return common::Success();
}

}  // namespace sigil::workers
