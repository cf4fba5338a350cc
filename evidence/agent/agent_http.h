// One HTTP request to the TEE guest agent over its unix socket (dstack's API: POST /<Method> with a
// JSON body), bounded in time and size. Shared by AgentClient (GetQuote, Info: public answers) and
// keyd's TeeKeySource (GetKey: the root key), so there is one transport to the agent, not two.
// The answer lands in a wiping buffer because GetKey's answer is the root key.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/ipc_frame.h"
#include "common/result.h"

namespace sigil::evidence {

struct AgentAnswer {
    long status = 0;             // the HTTP status
    common::SecretBuffer body;   // the answer's bytes, wiped when freed
};

// POSTs `body` (JSON) to http://localhost<path> over the unix socket `socket_path`.
// Errors: Timeout "agent_timeout" (no complete answer within timeout_ms, connect included);
// Unavailable "agent_unreachable" (cannot connect, the connection failed, or the answer is over
// max_answer_bytes). Any HTTP status is an answer: the caller decides what a non-200 means.
// Messages never quote the answer.
common::Result<AgentAnswer> PostToAgent(const std::string& socket_path, const std::string& path, std::string_view body,
                                        int timeout_ms, std::size_t max_answer_bytes);

}  // namespace sigil::evidence
