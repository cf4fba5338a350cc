#include "workers/sandbox/zygote.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workers/sandbox/control.h"
#include "workers/sandbox/transpiler.h"

namespace sigil::workers {

// The zygote's whole life: serve SPAWN/KILL, report exits, stop when the worker goes away.
[[noreturn]] void RunZygote(int control, const SandboxChildOptions& options) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (control != ZYGOTE_CONTROL_FD) {
        if (::dup2(control, ZYGOTE_CONTROL_FD) < 0) ::_exit(1);
        control = ZYGOTE_CONTROL_FD;
    }
    if (::close_range(ZYGOTE_CONTROL_FD + 1, ~0u, 0) != 0) {
        for (int fd = ZYGOTE_CONTROL_FD + 1; fd < 65536; ++fd) ::close(fd);
    }
    ::fcntl(control, F_SETFD, FD_CLOEXEC);
    // The worker already put /dev/null at 0 (its own 0 is the FastCGI listen socket); kept in case
    // sigil-sandbox is started some other way.
    if (const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC); null_fd >= 0) {
        ::dup2(null_fd, 0);
        ::close(null_fd);
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &chld, nullptr);
    const int sig_fd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_fd < 0) ::_exit(1);

    // Everything children share copy-on-write is built once, here, before any request data.
    WarmUpSandboxParent();
    std::unique_ptr<Transpiler> transpiler;
    if (options.preload_transpiler) {
        const SandboxHeapHooks hooks = SandboxHeap();
        const TranspilerAllocator allocator{hooks.alloc, hooks.realloc, hooks.free};
        auto created = Transpiler::Create(hooks.udata, &allocator);
        // A build defect; children then run code as given and modern syntax fails to parse.
        if (created.ok()) transpiler = std::move(created).value();
    }
    PrepareSandboxHeap(options);

    std::set<pid_t> live;
    auto reap = [&]() {
        int status = 0;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
            live.erase(pid);
            SendZygoteControl(control, ZygoteControl{ZygoteControlType::Exited, pid, status});
        }
    };
    for (;;) {
        pollfd fds[2] = {{control, POLLIN, 0}, {sig_fd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[1].revents & POLLIN) {
            signalfd_siginfo info;
            while (::read(sig_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
            }
            reap();
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            auto received = ReceiveZygoteControl(control);
            if (!received.ok()) {
                // A malformed packet (its descriptors already closed) is dropped; a dead socket ends us.
                if (received.error().code == "malformed_message") continue;
                break;
            }
            if (!received->has_value()) break;
            ReceivedControl& msg = **received;
            if (msg.message.type == ZygoteControlType::Spawn) {
                const pid_t child = ::fork();
                if (child == 0) {
                    ::close(sig_fd);
                    RunSandboxChild(msg.passed.get(), options, transpiler.get());
                }
                msg.passed.Reset();
                if (child > 0) live.insert(child);
                SendZygoteControl(control, ZygoteControl{ZygoteControlType::Spawned, child > 0 ? child : -1, 0});
            } else if (msg.message.type == ZygoteControlType::Kill) {
                if (live.count(msg.message.pid) != 0) ::kill(msg.message.pid, SIGKILL);
            }
        }
    }
    // The worker is gone: nobody can read the children's results.
    for (pid_t pid : live) ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, 0) > 0) {
    }
    ::_exit(0);
}

int SandboxMain(int argc, char** argv, SandboxNativeInstaller install_test_natives) {
    SandboxChildOptions options;
    options.install_test_natives = install_test_natives;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--no-transpiler") {
            options.preload_transpiler = false;
        } else {
            std::fprintf(stderr, "sigil-sandbox: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    struct stat st {};
    if (::fstat(ZYGOTE_CONTROL_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        std::fprintf(stderr, "sigil-sandbox: descriptor %d is not a socket; sigil-worker starts this program with "
                             "its control socket there\n", ZYGOTE_CONTROL_FD);
        return 2;
    }
    RunZygote(ZYGOTE_CONTROL_FD, options);
}

}  // namespace sigil::workers
