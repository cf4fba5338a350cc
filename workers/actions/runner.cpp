#include "workers/actions/runner.h"

#include <cstdio>
#include <fstream>
#include <map>

#include <unistd.h>
#include <memory>

#include <rapidjson/document.h>

#include "common/aes_gcm.h"
#include "common/cid.h"
#include "common/eip712.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"
#include "common/secp256k1.h"
#include "workers/actions/fetch.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

std::vector<std::string> SplitList(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        std::string item = text.substr(pos, comma - pos);
        const auto b = item.find_first_not_of(" \t");
        const auto e = item.find_last_not_of(" \t");
        if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
        pos = comma + 1;
    }
    return out;
}

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

bool IsUtf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += n;
    }
    return true;
}

// The worker's side of one run.
class RunOps : public OpHandler {
public:
    RunOps(Service& service, const Caller& caller, const ActionSettings& settings, std::string cid,
           std::optional<common::Address20> authorized_pkp)
        : m_service(service), m_caller(caller), m_settings(settings), m_cid(std::move(cid)),
          m_cid_hash(common::CidHash(m_cid)) {
        if (authorized_pkp) m_authorized[*authorized_pkp] = true;
    }

    Result<std::string> OnOp(std::string_view name, std::string_view args_json) override {
        rapidjson::Document args;
        args.Parse(args_json.data(), args_json.size());
        if (args.HasParseError() || !args.IsObject()) return BadOp("the argument must be an object");
        if (name == "fetch") return Fetch(args);
        m_service.StartChainBudget();  // each op's chain reads get their own budget, not the request's
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

    common::Status OnLog(std::string_view text) override {
        m_logs.append(text);
        m_logs.push_back('\n');
        return common::Success();
    }

    std::string TakeLogs() { return std::move(m_logs); }

private:
    Result<std::string> ActionPrivateKey() {
        KeydClient* keyd = m_service.Keyd();
        if (keyd == nullptr) return MakeError(ErrorKind::Unavailable, "keyd_unavailable", "no key service configured");
        SIGIL_TRY(key, keyd->GetActionKey(m_cid));
        return common::JsonQuote(common::HexEncode(key->view(), true));
    }

    Result<std::string> ActionPublic(const rapidjson::Document& args, bool address) {
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
    Result<const common::PkpKeys*> KeysFor(const rapidjson::Document& args, common::Address20* pkp_out) {
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
        SIGIL_TRY(keys, keyd->GetPkpKeys(common::PkpRef{m_caller.account_hash.Word(), wallet->second.derivation_path.Word()}));
        // A registered address that is not the one derived for (account, path) is a foreign key
        // advertised as this PKP: never sign or decrypt "for" it (DESIGN.md section 3).
        auto derived = common::PrivateKey::FromBytes(keys->signing_key.view());
        if (!derived.ok() || derived->Address() != *pkp) {
            return MakeError(ErrorKind::Forbidden, "pkp_key_mismatch",
                             "PKP " + common::HexEncode(*pkp, true) + " is not the address derived for its account and path");
        }
        return &m_keys.emplace(*pkp, std::move(keys).value()).first->second;
    }

    Result<std::string> PkpOp(std::string_view name, const rapidjson::Document& args) {
        common::Address20 pkp{};
        SIGIL_TRY(keys, KeysFor(args, &pkp));
        SIGIL_TRY(key, common::PrivateKey::FromBytes((*keys)->signing_key.view()));
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
            SIGIL_TRY(hex, common::EncryptToHex((*keys)->encryption_key, *message));
            return common::JsonQuote(*hex);
        }
        // decrypt
        if (!args.HasMember("ciphertext") || !args["ciphertext"].IsString()) return BadOp("ciphertext (hex) is required");
        auto plain = common::DecryptFromHex((*keys)->encryption_key, args["ciphertext"].GetString());
        if (!plain.ok()) return BadOp("decryption failed: wrong PKP or damaged ciphertext");
        std::string_view text(reinterpret_cast<const char*>(plain->data()), plain->size());
        if (!IsUtf8(text)) return BadOp("the decrypted bytes are not UTF-8 text");
        return common::JsonQuote(text);
    }

    Result<std::string> Fetch(const rapidjson::Document& args) {
        if (++m_fetches > m_settings.max_fetch_count) {
            return OpLimit("fetch_limit", "the action made more than " + std::to_string(m_settings.max_fetch_count) +
                                              " fetch calls");
        }
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
        limits.timeout_ms = m_settings.fetch_timeout_ms;
        limits.max_response_bytes = m_settings.fetch_max_response_bytes;
        limits.allowed_addresses = m_settings.fetch_allowed_addresses;
        limits.refused_hosts = m_settings.public_hosts;
        SIGIL_TRY(response, workers::Fetch(request, limits));
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

    Service& m_service;
    const Caller& m_caller;
    const ActionSettings& m_settings;
    std::string m_cid;
    common::Hash32 m_cid_hash;
    std::map<common::Address20, bool> m_authorized;
    std::map<common::Address20, common::PkpKeys> m_keys;  // wiped when the run ends
    std::uint32_t m_key_requests = 0;
    std::uint32_t m_fetches = 0;
    std::string m_logs;
};

const char* EndCode(RunEnd end) {
    switch (end) {
    case RunEnd::Completed: return "";
    case RunEnd::ScriptError: return "script_error";
    case RunEnd::TimeLimit: return "time_limit";
    case RunEnd::MemoryLimit: return "memory_limit";
    case RunEnd::ResponseLimit: return "response_limit";
    case RunEnd::LogLimit: return "log_limit";
    case RunEnd::OpLimit: return "op_limit";
    case RunEnd::Stopped: return "stopped";
    case RunEnd::Crashed: return "sandbox_crashed";
    }
    return "sandbox_crashed";
}

}  // namespace

// Settings ----------------------------------------------------------------------------------------

Result<ActionSettings> ActionSettings::FromConfig(const common::Config& config) {
    ActionSettings s;
    auto i = [&config](const char* key) { return config.GetInt("actions", key); };
    s.run.time_ms = static_cast<std::uint64_t>(i("timeout_ms"));
    s.run.memory_bytes = static_cast<std::uint64_t>(i("memory_bytes"));
    s.run.max_response_bytes = static_cast<std::size_t>(i("max_response_bytes"));
    s.run.max_log_bytes = static_cast<std::size_t>(i("max_log_bytes"));
    s.max_code_bytes = static_cast<std::size_t>(i("max_code_bytes"));
    s.max_js_params_bytes = static_cast<std::size_t>(i("max_js_params_bytes"));
    s.max_fetch_count = static_cast<std::uint32_t>(i("max_fetch_count"));
    s.max_key_requests = static_cast<std::uint32_t>(i("max_key_requests"));
    // Ops past both limits would be refused anyway; the channel cap stops a flood of them.
    s.run.max_ops = s.max_fetch_count + s.max_key_requests + 1;
    s.fetch_timeout_ms = static_cast<int>(i("fetch_timeout_ms"));
    s.fetch_max_response_bytes = static_cast<std::size_t>(i("fetch_max_response_bytes"));
    s.fetch_allowed_addresses = SplitList(config.GetString("actions", "fetch_allowed_addresses"));
    s.public_hosts = SplitList(config.GetString("worker", "public_hosts"));
    if (auto policy = MakeFetchPolicy(s.fetch_allowed_addresses, s.public_hosts); !policy.ok()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_config",
                         "[actions] fetch_allowed_addresses or [worker] public_hosts: " + policy.error().message);
    }
    s.ipfs_gateways = SplitList(config.GetString("actions", "ipfs_gateways"));
    for (const auto& g : s.ipfs_gateways) {
        if (g.rfind("http://", 0) != 0 && g.rfind("https://", 0) != 0) {
            return MakeError(ErrorKind::InvalidInput, "invalid_config",
                             "[actions] ipfs_gateways: '" + g + "' is not an http(s) URL prefix");
        }
    }
    s.ipfs_timeout_ms = static_cast<int>(i("ipfs_timeout_ms"));
    s.code_cache_entries = static_cast<std::size_t>(i("code_cache_entries"));
    s.code_cache_dir = config.GetString("actions", "code_cache_dir");
    s.sandbox_path = config.GetString("actions", "sandbox_path");
    return s;
}

std::string ActionSettings::ClientConfigJson() const {
    return "{\"timeout_ms\":" + std::to_string(run.time_ms) + ",\"memory_limit_bytes\":" +
           std::to_string(run.memory_bytes) + ",\"max_code_bytes\":" + std::to_string(max_code_bytes) +
           ",\"max_js_params_bytes\":" + std::to_string(max_js_params_bytes) +
           ",\"max_response_bytes\":" + std::to_string(run.max_response_bytes) +
           ",\"max_console_log_bytes\":" + std::to_string(run.max_log_bytes) +
           ",\"max_fetch_count\":" + std::to_string(max_fetch_count) +
           ",\"max_key_requests\":" + std::to_string(max_key_requests) +
           ",\"fetch_timeout_ms\":" + std::to_string(fetch_timeout_ms) +
           ",\"fetch_max_response_bytes\":" + std::to_string(fetch_max_response_bytes) + "}";
}

// Cache -------------------------------------------------------------------------------------------

const CodeCache::Entry* CodeCache::Find(const std::string& cid) {
    auto it = m_map.find(cid);
    if (it == m_map.end()) return nullptr;
    m_lru.splice(m_lru.begin(), m_lru, it->second);
    return &it->second->second;
}

void CodeCache::Put(const std::string& cid, Entry entry) {
    if (m_max_entries == 0 || entry.code.size() > m_max_bytes) return;
    if (auto it = m_map.find(cid); it != m_map.end()) {
        m_bytes -= it->second->second.code.size();
        m_lru.erase(it->second);
        m_map.erase(it);
    }
    m_bytes += entry.code.size();
    m_lru.emplace_front(cid, std::move(entry));
    m_map[cid] = m_lru.begin();
    while (m_map.size() > m_max_entries || m_bytes > m_max_bytes) {
        m_bytes -= m_lru.back().second.code.size();
        m_map.erase(m_lru.back().first);
        m_lru.pop_back();
    }
}

// Runner ------------------------------------------------------------------------------------------

Result<std::unique_ptr<ActionRunner>> ActionRunner::Create(ActionSettings settings) {
    SIGIL_TRY(zygote, Zygote::Start(ZygoteOptions{settings.sandbox_path, {}}));
    return std::unique_ptr<ActionRunner>(new ActionRunner(std::move(settings), std::move(zygote).value()));
}

Result<ActionRequest> ActionRunner::ParseRequest(const rapidjson::Document* body) const {
    if (body == nullptr || !body->IsObject()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_input", "the body must be a JSON object with code or ipfs_id");
    }
    ActionRequest out;
    const bool has_code = body->HasMember("code") && !(*body)["code"].IsNull();
    const bool has_cid = body->HasMember("ipfs_id") && !(*body)["ipfs_id"].IsNull();
    if (has_code == has_cid) {
        return MakeError(ErrorKind::InvalidInput, "invalid_input", "give exactly one of code and ipfs_id");
    }
    if (has_code) {
        const auto& code = (*body)["code"];
        if (!code.IsString() || code.GetStringLength() == 0) {
            return MakeError(ErrorKind::InvalidInput, "invalid_field", "code must be a non-empty string");
        }
        if (code.GetStringLength() > m_settings.max_code_bytes) {
            return MakeError(ErrorKind::TooLarge, "code_too_large",
                             "code is " + std::to_string(code.GetStringLength()) + " bytes; the limit is " +
                                 std::to_string(m_settings.max_code_bytes));
        }
        out.code = std::string(code.GetString(), code.GetStringLength());
    } else {
        const auto& cid = (*body)["ipfs_id"];
        if (!cid.IsString() || !common::ParseCidV0(std::string_view(cid.GetString(), cid.GetStringLength())).ok()) {
            return MakeError(ErrorKind::InvalidInput, "invalid_ipfs_id", "ipfs_id must be a CIDv0 (Qm + 44 base58 characters)");
        }
        out.ipfs_id = cid.GetString();
    }
    if (body->HasMember("pkp_id") && !(*body)["pkp_id"].IsNull()) {
        const auto& pkp = (*body)["pkp_id"];
        const auto parsed = pkp.IsString() ? std::optional(common::ParseAddress(pkp.GetString())) : std::nullopt;
        if (!parsed || !parsed->ok()) {
            return MakeError(ErrorKind::InvalidInput, "invalid_pkp_id", "pkp_id must be an address (0x + 40 hex)");
        }
        out.pkp = **parsed;
    }
    if (body->HasMember("js_params") && !(*body)["js_params"].IsNull()) {
        out.params_json = common::JsonSerialize((*body)["js_params"]);
        if (out.params_json.size() > m_settings.max_js_params_bytes) {
            return MakeError(ErrorKind::TooLarge, "js_params_too_large",
                             "js_params is " + std::to_string(out.params_json.size()) + " bytes as JSON; the limit is " +
                                 std::to_string(m_settings.max_js_params_bytes));
        }
    }
    return out;
}

namespace {

// The shared folder cache: files named by CID, written atomically, verified on every read (a
// damaged or planted file is ignored), so it needs no more trust than a gateway.
std::optional<std::string> ReadCachedSource(const std::string& dir, const std::string& cid, std::size_t max_bytes) {
    if (dir.empty()) return std::nullopt;
    std::ifstream in(dir + "/" + cid, std::ios::binary);
    if (!in) return std::nullopt;
    std::string data;
    data.resize(max_bytes + 1);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<std::size_t>(in.gcount()));
    if (data.size() > max_bytes || common::ComputeCidV0(data) != cid) return std::nullopt;
    return data;
}

void WriteCachedSource(const std::string& dir, const std::string& cid, const std::string& data) {
    if (dir.empty()) return;
    const std::string tmp = dir + "/." + cid + "." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out) {
            std::remove(tmp.c_str());
            common::LogWarn("code cache: cannot write " + tmp);
            return;
        }
    }
    if (std::rename(tmp.c_str(), (dir + "/" + cid).c_str()) != 0) std::remove(tmp.c_str());
}

// A gateway fetch's failure for the caller: the kind, never the message (it names the gateway).
std::string GatewayFailure(const common::Error& error) {
    if (error.code == "fetch_timeout") return "timed out";
    if (error.code == "fetch_address_refused") return "redirected to an address that is not allowed";
    if (error.code == "fetch_response_too_large") return "the code is larger than the code limit";
    return "unreachable";
}

}  // namespace

Result<CodeCache::Entry> ActionRunner::LoadByCid(const std::string& cid) {
    if (const auto* hit = m_cache.Find(cid)) return *hit;
    if (auto cached = ReadCachedSource(m_settings.code_cache_dir, cid, m_settings.max_code_bytes)) {
        CodeCache::Entry entry{std::move(*cached), false};
        m_cache.Put(cid, entry);
        return entry;
    }
    if (m_settings.ipfs_gateways.empty()) {
        return MakeError(ErrorKind::Unavailable, "ipfs_unavailable", "no IPFS gateway is configured");
    }
    // The caller learns which gateway failed and how, in our words; the details (URLs, hosts,
    // addresses of the operator's gateways) go to the log only.
    std::string failures;
    bool mismatch = false;
    for (std::size_t i = 0; i < m_settings.ipfs_gateways.size(); ++i) {
        const std::string& gateway = m_settings.ipfs_gateways[i];
        const std::string label = "gateway " + std::to_string(i + 1) + ": ";
        FetchLimits limits;
        limits.trusted_first_hop = true;  // the operator's own gateway (the dev one is local); redirects are not
        limits.allowed_addresses = m_settings.fetch_allowed_addresses;
        limits.refused_hosts = m_settings.public_hosts;
        limits.timeout_ms = m_settings.ipfs_timeout_ms;
        limits.max_response_bytes = m_settings.max_code_bytes;
        FetchRequest request;
        request.url = gateway + cid;
        auto response = workers::Fetch(request, limits);
        std::string failure;
        if (!response.ok()) {
            common::LogWarn("gateway " + gateway + " failed for " + cid + ": " + response.error().message);
            failure = GatewayFailure(response.error());
        } else if (response->status != 200) {
            failure = "HTTP " + std::to_string(response->status);
        } else if (common::ComputeCidV0(response->body) != cid) {
            mismatch = true;
            failure = "the bytes do not hash to " + cid;
            common::LogWarn("gateway " + gateway + " sent bytes that do not match " + cid);
        } else {
            WriteCachedSource(m_settings.code_cache_dir, cid, response->body);
            CodeCache::Entry entry{std::move(response->body), false};
            m_cache.Put(cid, entry);
            return entry;
        }
        failures += (failures.empty() ? "" : "; ") + label + failure;
    }
    return MakeError(ErrorKind::Unavailable, mismatch ? "ipfs_cid_mismatch" : "ipfs_unavailable",
                     "could not fetch " + cid + " from any gateway (" + failures + ")");
}

Result<ActionResult> ActionRunner::Run(Service& service, const Caller& caller, const ActionRequest& request) {
    const std::string cid = request.code ? common::ComputeCidV0(*request.code) : *request.ipfs_id;
    const common::Hash32 cid_hash = common::CidHash(cid);
    SIGIL_TRY(reader, service.Reader());
    auto allowed = request.pkp ? (*reader)->CanExecute(caller.key_hash, cid_hash, *request.pkp)
                               : (*reader)->CanExecuteAction(caller.key_hash, cid_hash);
    if (!allowed.ok()) return allowed.error();
    if (!*allowed) {
        return MakeError(ErrorKind::Forbidden, "not_authorized",
                         request.pkp ? "no group on which this key may execute lists both action " + cid + " and PKP " +
                                           common::HexEncode(*request.pkp, true)
                                     : "no group on which this key may execute lists action " + cid);
    }

    RunRequest run;
    run.params_json = request.params_json;
    run.limits = m_settings.run;
    if (const auto* hit = m_cache.Find(cid)) {
        run.code = hit->code;
        run.lower = !hit->lowered;
    } else if (request.code) {
        run.code = *request.code;
        run.lower = true;
    } else {
        SIGIL_TRY(entry, LoadByCid(cid));
        run.code = std::move(entry->code);
        run.lower = !entry->lowered;
    }

    RunOps ops(service, caller, m_settings, cid, request.pkp);
    SIGIL_TRY(outcome, RunAction(m_zygote, run, ops));
    if (outcome->lowered_code) m_cache.Put(cid, CodeCache::Entry{std::move(*outcome->lowered_code), true});
    outcome->lowered_code.reset();
    return ActionResult{cid, std::move(outcome).value(), ops.TakeLogs()};
}

std::string ActionResult::ResponseJson() const {
    std::string out = "{\"response\":";
    out += outcome.end == RunEnd::Completed && !outcome.response_json.empty() ? outcome.response_json : "\"\"";
    out += ",\"logs\":" + common::JsonQuote(logs);
    out += ",\"has_error\":";
    if (outcome.end == RunEnd::Completed) return out + "false}";
    const bool script = outcome.end == RunEnd::ScriptError;
    std::string code = script ? (outcome.error.code == "SyntaxError" ? "syntax_error" : "script_error")
                              : (outcome.error.code.empty() ? EndCode(outcome.end) : outcome.error.code);
    out += "true,\"error\":{\"code\":" + common::JsonQuote(code);
    if (script) out += ",\"name\":" + common::JsonQuote(outcome.error.code);
    out += ",\"message\":" + common::JsonQuote(outcome.error.message);
    if (!outcome.error.stack.empty()) out += ",\"stack\":" + common::JsonQuote(outcome.error.stack);
    return out + "}}";
}

}  // namespace sigil::workers
