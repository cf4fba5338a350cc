// Signal delivery for the master loop: the handler only writes the signal number to a self-pipe.
#pragma once

#include <initializer_list>
#include <vector>

#include "common/handles.h"
#include "common/result.h"

namespace sigil::supervisor {

// Owns a non-blocking, close-on-exec pipe. Installed handlers write one byte (the signal number)
// and nothing else, so all real work happens in the loop, outside signal context.
// At most one SignalPipe may be installed per process.
class SignalPipe {
public:
    SignalPipe() = default;
    ~SignalPipe();
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;

    // Creates the pipe and installs handlers for `signals` (without SA_RESTART, so blocking calls
    // return EINTR). Errors: Internal "signal_setup" (pipe or sigaction failed).
    common::Status Install(std::initializer_list<int> signals);

    // The descriptor to poll for POLLIN.
    int fd() const { return m_read.get(); }

    // Reads every pending signal number, in arrival order (a signal that arrives many times while
    // the loop is busy may appear once or many times). Never blocks.
    std::vector<int> Drain();

private:
    common::UniqueFd m_read;
    common::UniqueFd m_write;
    std::vector<int> m_installed;
};

}  // namespace sigil::supervisor
