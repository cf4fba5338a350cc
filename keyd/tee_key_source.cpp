#include "keyd/tee_key_source.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <string_view>

#include "common/key_derivation.h"
#include "evidence/agent/agent_http.h"

namespace sigil::keyd {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Error BadAnswer(const std::string& why) {
    return MakeError(ErrorKind::Unavailable, "tee_key_bad_answer", "the GetKey answer " + why);
}

int Nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool IsHexString(const rapidjson::Value& v) {
    if (!v.IsString()) return false;
    std::string_view s(v.GetString(), v.GetStringLength());
    if (s.starts_with("0x")) s.remove_prefix(2);
    return s.size() % 2 == 0 && std::all_of(s.begin(), s.end(), [](char c) { return Nibble(c) >= 0; });
}

}  // namespace

common::Result<common::SecretBytes> ParseGetKeyAnswer(common::SecretBuffer& body) {
    // In-situ parsing decodes strings inside `body` itself: the key's hex is never copied into the
    // document's (unwiped) pool.
    body.push_back(0);
    rapidjson::Document doc;
    doc.ParseInsitu<rapidjson::kParseValidateEncodingFlag>(reinterpret_cast<char*>(body.data()));
    if (doc.HasParseError() || !doc.IsObject()) return BadAnswer("is not a JSON object");
    const auto key = doc.FindMember("key");
    if (key == doc.MemberEnd() || !key->value.IsString()) return BadAnswer("has no `key` string");
    std::string_view hex(key->value.GetString(), key->value.GetStringLength());
    if (hex.starts_with("0x")) hex.remove_prefix(2);
    if (hex.size() != 2 * common::ROOT_KEY_SIZE) {
        return BadAnswer("`key` holds " + std::to_string(hex.size()) + " characters, not " +
                         std::to_string(2 * common::ROOT_KEY_SIZE) + " hex digits (32 bytes)");
    }
    common::SecretBytes root(common::ROOT_KEY_SIZE);
    std::uint8_t any = 0;
    for (std::size_t i = 0; i < root.size(); ++i) {
        const int hi = Nibble(hex[2 * i]), lo = Nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return BadAnswer("`key` is not hex");
        root.data()[i] = static_cast<std::uint8_t>(hi << 4 | lo);
        any |= root.data()[i];
    }
    if (any == 0) return BadAnswer("`key` is all zero");
    const auto chain = doc.FindMember("signature_chain");
    if (chain != doc.MemberEnd()) {
        if (!chain->value.IsArray()) return BadAnswer("has a `signature_chain` that is not an array");
        for (const auto& sig : chain->value.GetArray()) {
            if (!IsHexString(sig)) return BadAnswer("has a `signature_chain` entry that is not hex");
        }
    }
    return root;
}

common::Result<common::SecretBytes> TeeKeySource::LoadRootKey() {
    const std::string where = "TEE key service at " + m_socket + ": ";
    if (m_socket.empty()) {
        return MakeError(ErrorKind::Unavailable, "tee_key_unavailable", "--tee-key-service names no socket");
    }
    const std::string request = std::string("{\"path\":\"") + TEE_ROOT_KEY_PATH + "\",\"purpose\":\"" +
                                TEE_ROOT_KEY_PURPOSE + "\"}";
    auto answer = evidence::PostToAgent(m_socket, "/GetKey", request, m_timeout_ms, TEE_KEY_MAX_ANSWER);
    if (!answer.ok()) {
        if (answer.error().kind == ErrorKind::Timeout) {
            return MakeError(ErrorKind::Timeout, "tee_key_timeout", where + "GetKey " + answer.error().message);
        }
        return MakeError(ErrorKind::Unavailable, "tee_key_unavailable", where + answer.error().message);
    }
    if (answer->status != 200) {
        return MakeError(ErrorKind::Unavailable, "tee_key_unavailable",
                         where + "GetKey answered HTTP " + std::to_string(answer->status));
    }
    auto root = ParseGetKeyAnswer(answer->body);
    if (!root.ok()) return MakeError(root.error().kind, root.error().code, where + root.error().message);
    return root;
}

}  // namespace sigil::keyd
