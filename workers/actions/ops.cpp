#include "workers/actions/ops.h"

#include <algorithm>

#include "common/activity.h"
#include "common/aes_gcm.h"
#include "common/cid.h"
#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/metrics.h"
#include "common/secp256k1.h"
#include "common/utf8.h"
#include "workers/actions/fetch.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;
using common::IsUtf8;

namespace {

common::Error BadOp(const std::string& message) { return MakeError(ErrorKind::InvalidInput, "invalid_op", message); }

// A limit hit inside an op: the code ends in "_limit", which ends the run (RunSession).
common::Error OpLimit(const char* code, const std::string& message) {
    return MakeError(ErrorKind::Overloaded, code, message);
}

// Bytes given as 0x-hex or as an array of 0..255 numbers.
Result<common::Bytes> BytesArg(const rapidjson::Value& v, const char* name) {
    if (v.IsString()) {
        auto bytes = common::HexDecode(std::string_view(v.GetString(), v.GetStringLength()), common::HexPrefix::Required);
        if (!bytes.ok()) return BadOp(std::string(name) + " must be 0x-hex or a byte array");
        return bytes;
    }
    if (v.IsArray()) {
        common::Bytes out;
        out.reserve(v.Size());
        for (const auto& b : v.GetArray()) {
            if (!b.IsUint() || b.GetUint() > 255) return BadOp(std::string(name) + " must hold bytes (0..255)");
            out.push_back(static_cast<std::uint8_t>(b.GetUint()));
        }
        return out;
    }
    return BadOp(std::string(name) + " must be 0x-hex or a byte array");
}

// A message: a string's UTF-8 bytes, or bytes given as an array.
Result<common::Bytes> MessageArg(const rapidjson::Value& v, const char* name) {
    if (v.IsString()) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(v.GetString());
        return common::Bytes(p, p + v.GetStringLength());
    }
    if (v.IsArray()) return BytesArg(v, name);
    return BadOp(std::string(name) + " must be a string or a byte array");
}

}  // namespace

RunOps::RunOps(Service& service, const Caller& caller, const ActionSettings& settings, std::string cid,
                 std::optional<common::Address20> authorized_pkp)
    : m_service(service), m_caller(caller), m_settings(settings), m_cid(std::move(cid)),
      m_cid_hash(common::CidHash(m_cid)),
      m_run_deadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.run.time_ms)) {
    if (authorized_pkp) m_authorized[*authorized_pkp] = true;
}

void RunOps::OnStart(const RunLimits& limits) {
    m_run_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.time_ms);
}

namespace {

common::OpKind OpKindOf(std::string_view name) {
    if (name == "signEcdsa" || name == "signMessage" || name == "signTypedData") return common::OpKind::Sign;
    if (name == "encrypt") return common::OpKind::Encrypt;
    if (name == "decrypt") return common::OpKind::Decrypt;
    if (name == "fetch") return common::OpKind::Fetch;
    if (name == "getPublicKey" || name == "getPrivateKey" || name == "getActionPrivateKey" ||
        name == "getActionPublicKey" || name == "getActionWalletAddress") {
        return common::OpKind::Key;
    }
    return common::OpKind::Other;
}

}  // namespace

Result<std::string> RunOps::OnOp(std::string_view name, std::string_view args_json) {
    common::CountOp(OpKindOf(name));
    const auto left_at_start = RunTimeLeft();
    auto result = Dispatch(name, args_json);
    // Starved by the run's own deadline: the run's time limit, not the chain's or keyd's failure.
    if (!result.ok() && result.error().kind == ErrorKind::Timeout && name != "fetch" &&
        (left_at_start < MIN_CHAIN_BUDGET || RunTimeLeft().count() <= 0)) {
        return OpLimit("time_limit", "the action's time limit passed while it waited for the chain (" +
                                         std::to_string(std::max<std::int64_t>(left_at_start.count(), 0)) +
                                         " ms were left when it asked)");
    }
    if (!result.ok() && !m_service_failure && name != "fetch") {
        const ErrorKind kind = result.error().kind;
        if (kind == ErrorKind::Unavailable || kind == ErrorKind::Timeout || kind == ErrorKind::Suspended ||
            kind == ErrorKind::Internal) {
            m_service_failure = result.error();
        }
    }
    return result;
}

Result<std::string> RunOps::Dispatch(std::string_view name, std::string_view args_json) {
    rapidjson::Document args;
    args.Parse(args_json.data(), args_json.size());
    if (args.HasParseError() || !args.IsObject()) return BadOp("the argument must be an object");
    // No op outlives the run: each gets at most the run's remaining time.
    const auto left = RunTimeLeft();
    if (left.count() <= 0) return OpLimit("time_limit", "the action's time limit passed during its requests");
    if (name == "fetch") return Fetch(args, left);
    m_service.StartChainBudget(left);  // each op's chain reads get their own budget, not the request's
    if (++m_key_requests > m_settings.max_key_requests) {
        return OpLimit("key_request_limit", "the action made more than " +
                                                std::to_string(m_settings.max_key_requests) + " key requests");
    }
    if (name == "getActionPrivateKey") return ActionPrivateKey();
    if (name == "getActionPublicKey" || name == "getActionWalletAddress") {
        return ActionPublic(args, name == "getActionWalletAddress");
    }
    if (name == "signEcdsa" || name == "signMessage" || name == "signTypedData" || name == "getPublicKey" ||
        name == "getPrivateKey" || name == "encrypt" || name == "decrypt") {
        return PkpOp(name, args);
    }
    return BadOp("unknown operation " + std::string(name));
}

common::Status RunOps::OnLog(std::string_view text) {
    m_logs.append(text);
    m_logs.push_back('\n');
    return common::Success();
}

std::string RunOps::TakeLogs() { return std::move(m_logs); }

Result<std::string> RunOps::ActionPrivateKey() {
    KeydClient* keyd = m_service.Keyd();
    if (keyd == nullptr) return MakeError(ErrorKind::Unavailable, "keyd_unavailable", "no key service configured");
    SIGIL_TRY(key, keyd->GetActionKey(m_cid));
    return common::JsonQuote(common::HexEncode(key->view(), true));
}

Result<std::string> RunOps::ActionPublic(const rapidjson::Document& args, bool address) {
    std::string cid = m_cid;
    if (args.HasMember("ipfsId")) {
        const auto& v = args["ipfsId"];
        if (!v.IsString() || !common::ParseCidV0(v.GetString()).ok()) return BadOp("ipfsId must be a CIDv0 (Qm...)");
        cid = v.GetString();
    }
    KeydClient* keyd = m_service.Keyd();
    if (keyd == nullptr) return MakeError(ErrorKind::Unavailable, "keyd_unavailable", "no key service configured");
    SIGIL_TRY(info, keyd->GetActionPublic(cid));
    if (address) return common::JsonQuote(common::ChecksumAddress(info->address));
    return common::JsonQuote(common::HexEncode(info->public_key, true));
}

// The PKP named by args.pkpId, authorized for this key and CID, with its keys from keyd.
Result<const keyd::PkpKeys*> RunOps::KeysFor(const rapidjson::Document& args, common::Address20* pkp_out) {
    if (!args.HasMember("pkpId") || !args["pkpId"].IsString()) return BadOp("pkpId (0x + 40 hex) is required");
    auto pkp = common::ParseAddress(args["pkpId"].GetString());
    if (!pkp.ok()) return BadOp("pkpId must be an address (0x + 40 hex)");
    *pkp_out = *pkp;
    auto known = m_authorized.find(*pkp);
    if (known == m_authorized.end()) {
        SIGIL_TRY(reader, m_service.Reader());
        SIGIL_TRY(allowed, (*reader)->CanExecute(m_caller.key_hash, m_cid_hash, *pkp));
        known = m_authorized.emplace(*pkp, *allowed).first;
    }
    if (!known->second) {
        return MakeError(ErrorKind::Forbidden, "not_authorized",
                         "no group on which this key may execute lists both this action and PKP " +
                             common::HexEncode(*pkp, true));
    }
    if (auto cached = m_keys.find(*pkp); cached != m_keys.end()) return &cached->second;
    SIGIL_TRY(reader, m_service.Reader());
    SIGIL_TRY(wallet, (*reader)->GetWallet(*pkp));
    // canExecute already required this; checked again so a cache race can never hand out
    // keys under another account's hash.
    if (wallet->first != m_caller.account_hash) {
        return MakeError(ErrorKind::Forbidden, "not_authorized", "the PKP belongs to another account");
    }
    KeydClient* keyd = m_service.Keyd();
    if (keyd == nullptr) return MakeError(ErrorKind::Unavailable, "keyd_unavailable", "no key service configured");
    SIGIL_TRY(keys, keyd->GetPkpKeys(keyd::PkpRef{m_caller.account_hash.Word(), wallet->second.derivation_path.Word()}));
    // A registered address that is not the one derived for (account, path) is a foreign key
    // advertised as this PKP: never sign or decrypt "for" it (DESIGN.md section 3).
    auto derived = common::PrivateKey::FromBytes(keys->signing_key.view());
    if (!derived.ok() || derived->Address() != *pkp) {
        return MakeError(ErrorKind::Forbidden, "pkp_key_mismatch",
                         "PKP " + common::HexEncode(*pkp, true) + " is not the address derived for its account and path");
    }
    return &m_keys.emplace(*pkp, std::move(keys).value()).first->second;
}

Result<std::string> RunOps::PkpOp(std::string_view name, const rapidjson::Document& args) {
    common::Address20 pkp{};
    SIGIL_TRY(keys, KeysFor(args, &pkp));
    return PkpKeyOp(name, args, **keys);
}

Result<std::string> PkpKeyOp(std::string_view name, const rapidjson::Document& args, const keyd::PkpKeys& keys) {
    SIGIL_TRY(key, common::PrivateKey::FromBytes(keys.signing_key.view()));
    if (name == "getPublicKey") return common::JsonQuote(common::HexEncode(key->PublicKey().Uncompressed(), true));
    if (name == "getPrivateKey") return common::JsonQuote(common::HexEncode(key->Secret().view(), true));
    if (name == "signEcdsa") {
        if (!args.HasMember("toSign")) return BadOp("toSign (a 32-byte digest) is required");
        SIGIL_TRY(digest, BytesArg(args["toSign"], "toSign"));
        if (digest->size() != 32) return BadOp("toSign must be exactly 32 bytes");
        common::Hash32 d{};
        std::copy(digest->begin(), digest->end(), d.begin());
        return common::JsonQuote(common::HexEncode(common::SignDigest(*key, d), true));
    }
    if (name == "signMessage") {
        if (!args.HasMember("message")) return BadOp("message is required");
        SIGIL_TRY(message, MessageArg(args["message"], "message"));
        return common::JsonQuote(common::HexEncode(common::SignPersonalMessage(*key, *message), true));
    }
    if (name == "signTypedData") {
        for (const char* field : {"domain", "types", "value"}) {
            if (!args.HasMember(field) || !args[field].IsObject()) return BadOp(std::string(field) + " must be an object");
        }
        auto digest = common::HashTypedDataJson(common::JsonSerialize(args["domain"]), common::JsonSerialize(args["types"]), common::JsonSerialize(args["value"]));
        if (!digest.ok()) return BadOp("typed data: " + digest.error().message);
        return common::JsonQuote(common::HexEncode(common::SignDigest(*key, *digest), true));
    }
    if (name == "encrypt") {
        if (!args.HasMember("message")) return BadOp("message is required");
        SIGIL_TRY(message, MessageArg(args["message"], "message"));
        SIGIL_TRY(hex, common::EncryptToHex(keys.encryption_key, *message));
        return common::JsonQuote(*hex);
    }
    // decrypt
    if (!args.HasMember("ciphertext") || !args["ciphertext"].IsString()) return BadOp("ciphertext (hex) is required");
    auto plain = common::DecryptFromHex(keys.encryption_key, args["ciphertext"].GetString());
    if (!plain.ok()) return BadOp("decryption failed: wrong PKP or damaged ciphertext");
    std::string_view text(reinterpret_cast<const char*>(plain->data()), plain->size());
    if (!IsUtf8(text)) return BadOp("the decrypted bytes are not UTF-8 text");
    return common::JsonQuote(text);
}

std::chrono::milliseconds RunOps::RunTimeLeft() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(m_run_deadline - std::chrono::steady_clock::now());
}

Result<std::string> RunOps::Fetch(const rapidjson::Document& args, std::chrono::milliseconds left) {
    if (++m_fetches > m_settings.max_fetch_count) {
        return OpLimit("fetch_limit", "the action made more than " + std::to_string(m_settings.max_fetch_count) +
                                          " fetch calls");
    }
    return FetchOp(args, m_settings, left);
}

Result<std::string> FetchOp(const rapidjson::Document& args, const ActionSettings& settings, std::chrono::milliseconds left) {
    FetchRequest request;
    if (!args.HasMember("url") || !args["url"].IsString()) return BadOp("fetch needs a url");
    request.url = args["url"].GetString();
    if (args.HasMember("method") && args["method"].IsString()) request.method = args["method"].GetString();
    if (args.HasMember("headers") && args["headers"].IsObject()) {
        for (const auto& h : args["headers"].GetObject()) {
            if (!h.value.IsString()) return BadOp("fetch header values must be strings");
            request.headers.emplace_back(h.name.GetString(), h.value.GetString());
        }
    }
    if (args.HasMember("body")) {
        const auto& body = args["body"];
        if (body.IsString()) {
            request.body.assign(body.GetString(), body.GetStringLength());
        } else if (!body.IsNull()) {
            SIGIL_TRY(bytes, BytesArg(body, "body"));
            request.body.assign(bytes->begin(), bytes->end());
        }
    }
    FetchLimits limits;
    limits.timeout_ms = static_cast<int>(std::min<std::int64_t>(settings.fetch_timeout_ms, left.count()));
    limits.max_response_bytes = settings.fetch_max_response_bytes;
    limits.allowed_addresses = settings.fetch_allowed_addresses;
    limits.refused_hosts = settings.public_hosts;
    const common::ActivityScope activity(common::Activity::Fetch);
    common::DependencyTimer timer(common::Dependency::Fetch);
    SIGIL_TRY(response, workers::Fetch(request, limits));
    timer.MarkOk();
    std::string headers = "{";
    for (std::size_t i = 0; i < response->headers.size(); ++i) {
        headers += (i ? "," : "") + common::JsonQuote(response->headers[i].first) + ":" + common::JsonQuote(response->headers[i].second);
    }
    headers += "}";
    // Bodies that are not UTF-8 are passed as Latin-1 so JSON can carry every byte.
    std::string body = response->body;
    if (!IsUtf8(body)) {
        std::string latin1;
        for (unsigned char c : response->body) {
            if (c < 0x80) latin1.push_back(static_cast<char>(c));
            else {
                latin1.push_back(static_cast<char>(0xC0 | (c >> 6)));
                latin1.push_back(static_cast<char>(0x80 | (c & 0x3F)));
            }
        }
        body = std::move(latin1);
    }
    return "{\"status\":" + std::to_string(response->status) + ",\"statusText\":" + common::JsonQuote(response->status_text) +
           ",\"url\":" + common::JsonQuote(response->url) + ",\"headers\":" + headers + ",\"body\":" + common::JsonQuote(body) + "}";
}


}  // namespace sigil::workers
