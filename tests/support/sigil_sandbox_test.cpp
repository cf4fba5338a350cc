// sigil-sandbox-test: sigil-sandbox plus a native that does what the sandbox must stop
// (__sigil_test_syscall), so the run tests can prove seccomp, the limits and crash handling. It is
// built under tests/ only; the production sigil-sandbox has no such native.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include <duktape.h>

#include "workers/sandbox/zygote.h"

namespace {

duk_ret_t TestSyscall(duk_context* ctx) {
    // A plain C string: Duktape longjmps, so no destructor may live across duk_push_string.
    const std::string_view what = duk_require_string(ctx, 0);
    if (what == "open") ::open("/etc/hostname", O_RDONLY);
    else if (what == "socket") ::socket(AF_INET, SOCK_STREAM, 0);
    else if (what == "fork") ::fork();
    else if (what == "mmap_exec") ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    else if (what == "abort") std::abort();
    else if (what == "segv") ::raise(SIGSEGV);
    else if (what == "spin") for (;;) asm volatile("");
    else if (what == "block") {
        char c;
        (void)::read(0, &c, 1);  // the worker never writes unasked: blocks until killed
    }
    duk_push_string(ctx, "survived");
    return 1;
}

void InstallTestNatives(duk_context* ctx) {
    duk_push_c_function(ctx, TestSyscall, 1);
    duk_put_global_string(ctx, "__sigil_test_syscall");
}

}  // namespace

int main(int argc, char** argv) { return sigil::workers::SandboxMain(argc, argv, InstallTestNatives); }
