// keyd's production key source: the root key from the TEE's key service, dstack's guest agent
// `GetKey` over its unix socket (the same agent the worker asks for quotes, evidence/agent).
#pragma once

#include <string>

#include "common/ipc_frame.h"
#include "common/result.h"
#include "common/secret.h"
#include "keyd/key_source.h"

namespace sigil::keyd {

// The fixed key path keyd asks for. dstack derives GetKey's answer from the app's key (issued by
// its KMS to every instance of the same measured app id, and to no one else) and this path, so
// every instance of the app gets the same root key. A new path means a new root key (every PKP,
// action and payer address changes): bump the version only with a migration.
inline constexpr const char* TEE_ROOT_KEY_PATH = "sigil/root/v1";
// GetKey's `purpose`: dstack signs it into the signature chain only; it does not change the key.
inline constexpr const char* TEE_ROOT_KEY_PURPOSE = "sigil-keyd root key";
// How long keyd waits for the agent at start, connect included.
inline constexpr int TEE_KEY_TIMEOUT_MS = 10000;
// GetKey's answer is ~300 bytes (key + two signatures); anything near this is not the agent.
inline constexpr std::size_t TEE_KEY_MAX_ANSWER = 64 * 1024;

// Reads a GetKey answer: a JSON object whose `key` is the derived key as hex (64 digits, an
// optional 0x), and whose `signature_chain`, when present, is an array of hex strings (dstack's
// proof, for third parties, that its KMS issued the key; keyd trusts its own agent's socket and does
// not check it). The key is used as it is: dstack's secp256k1 key is 32 bytes of derived key
// material, exactly the root key's size. All zero is refused (an agent that lost its key).
// Parsed in place, so the key's hex never leaves `body` (a wiping buffer); the message never
// quotes the answer.
// Errors: Unavailable "tee_key_bad_answer" (not JSON, no `key`, not 64 hex digits, all zero, bad
// signature_chain).
common::Result<common::SecretBytes> ParseGetKeyAnswer(common::SecretBuffer& body);

// The root key from the guest agent at `socket_path`: POST /GetKey {"path": TEE_ROOT_KEY_PATH,
// "purpose": TEE_ROOT_KEY_PURPOSE} (secp256k1, dstack's default algorithm), within
// TEE_KEY_TIMEOUT_MS. Nothing is written to disk. Every error names the socket:
//   Unavailable "tee_key_unavailable"  no socket, refused connection, HTTP status other than 200
//   Timeout "tee_key_timeout"          no answer in time
//   Unavailable "tee_key_bad_answer"   as ParseGetKeyAnswer
class TeeKeySource final : public KeySource {
public:
    explicit TeeKeySource(std::string socket_path, int timeout_ms = TEE_KEY_TIMEOUT_MS)
        : m_socket(std::move(socket_path)), m_timeout_ms(timeout_ms) {}
    common::Result<common::SecretBytes> LoadRootKey() override;
    std::string Describe() const override { return "TEE key service (dstack GetKey) at " + m_socket; }

private:
    std::string m_socket;
    int m_timeout_ms;
};

}  // namespace sigil::keyd
