#include "workers/actions/local_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include <rapidjson/document.h>

#include "common/cid.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/random.h"
#include "common/secp256k1.h"
#include "workers/actions/imports.h"
#include "workers/actions/ops.h"
#include "workers/actions/runner.h"
#include "workers/actions/sandbox_host.h"
#include "workers/sandbox/protocol/import_header.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// Runs of a local run whose child stopped to say what its lowered text imports (as the service's).
constexpr int MAX_LOCAL_IMPORT_ROUNDS = 8;

keyd::PkpKeys ThrowAwayPkp() {
    const common::PrivateKey key = common::PrivateKey::Generate();
    return keyd::PkpKeys{common::SecretBytes(key.Secret().view()), common::RandomSecret(32)};
}

// The service's ops over keys of this run only: one PKP, and an action key per CID asked for.
class LocalOps final : public OpHandler {
public:
    LocalOps(const ActionSettings& settings, std::string cid)
        : m_settings(settings), m_cid(std::move(cid)), m_pkp(ThrowAwayPkp()),
          m_pkp_address(common::PrivateKey::FromBytes(m_pkp.signing_key.view())->Address()),
          m_deadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.run.time_ms)) {}

    const common::Address20& pkp_address() const { return m_pkp_address; }
    std::string TakeLogs() { return std::move(m_logs); }

    void OnStart(const RunLimits& limits) override {
        m_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.time_ms);
    }

    common::Status OnLog(std::string_view text) override {
        m_logs.append(text);
        m_logs.push_back('\n');
        return common::Success();
    }

    Result<std::string> OnOp(std::string_view name, std::string_view args_json) override {
        rapidjson::Document args;
        args.Parse(args_json.data(), args_json.size());
        if (args.HasParseError() || !args.IsObject()) {
            return MakeError(ErrorKind::InvalidInput, "invalid_op", "the argument must be an object");
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Limit("time_limit", "the action's time limit passed during its requests");
        if (name == "fetch") {
            if (++m_fetches > m_settings.max_fetch_count) {
                return Limit("fetch_limit", "the action made more than " + std::to_string(m_settings.max_fetch_count) + " fetch calls");
            }
            return FetchOp(args, m_settings, left);
        }
        if (++m_key_requests > m_settings.max_key_requests) {
            return Limit("key_request_limit", "the action made more than " + std::to_string(m_settings.max_key_requests) + " key requests");
        }
        if (name == "getActionPrivateKey") return common::JsonQuote(common::HexEncode(ActionKey(m_cid).Secret().view(), true));
        if (name == "getActionPublicKey" || name == "getActionWalletAddress") {
            std::string cid = m_cid;
            if (args.HasMember("ipfsId")) {
                if (!args["ipfsId"].IsString() || !common::ParseCidV0(args["ipfsId"].GetString()).ok()) {
                    return MakeError(ErrorKind::InvalidInput, "invalid_op", "ipfsId must be a CIDv0 (Qm...)");
                }
                cid = args["ipfsId"].GetString();
            }
            const common::PrivateKey& key = ActionKey(cid);
            if (name == "getActionWalletAddress") return common::JsonQuote(common::ChecksumAddress(key.Address()));
            return common::JsonQuote(common::HexEncode(key.PublicKey().Uncompressed(), true));
        }
        if (!args.HasMember("pkpId") || !args["pkpId"].IsString()) {
            return MakeError(ErrorKind::InvalidInput, "invalid_op", "pkpId (0x + 40 hex) is required");
        }
        auto pkp = common::ParseAddress(args["pkpId"].GetString());
        if (!pkp.ok()) return MakeError(ErrorKind::InvalidInput, "invalid_op", "pkpId must be an address (0x + 40 hex)");
        if (*pkp != m_pkp_address) {
            return MakeError(ErrorKind::Forbidden, "not_authorized",
                             "a local run has one throw-away PKP, " + common::ChecksumAddress(m_pkp_address) +
                                 " (js_params.pkpId); PKP " + common::HexEncode(*pkp, true) + " is not it");
        }
        return PkpKeyOp(name, args, m_pkp);
    }

private:
    static common::Error Limit(const char* code, const std::string& message) {
        return MakeError(ErrorKind::Overloaded, code, message);
    }
    const common::PrivateKey& ActionKey(const std::string& cid) {
        auto it = m_action_keys.find(cid);
        if (it == m_action_keys.end()) it = m_action_keys.emplace(cid, common::PrivateKey::Generate()).first;
        return it->second;
    }

    const ActionSettings& m_settings;
    std::string m_cid;
    keyd::PkpKeys m_pkp;
    common::Address20 m_pkp_address;
    std::map<std::string, common::PrivateKey> m_action_keys;
    std::chrono::steady_clock::time_point m_deadline;
    std::uint32_t m_fetches = 0;
    std::uint32_t m_key_requests = 0;
    std::string m_logs;
};

int Usage() {
    std::fprintf(stderr, "usage: sigil-worker --run-local FILE [--params JSON] [--config sigil.conf] [--modules DIR]\n");
    return 2;
}

}  // namespace

Result<std::string> RunLocal(const ActionSettings& settings, const LocalRunRequest& request) {
    rapidjson::Document params;
    params.Parse(request.params_json.data(), request.params_json.size());
    if (params.HasParseError() || !params.IsObject()) {
        return MakeError(ErrorKind::InvalidInput, "invalid_params", "--params must be a JSON object, e.g. '{\"name\":\"x\"}'");
    }
    if (request.code.size() > settings.max_code_bytes) {
        return MakeError(ErrorKind::TooLarge, "code_too_large", "the action is " + std::to_string(request.code.size()) +
                                                                    " bytes; the limit is " + std::to_string(settings.max_code_bytes));
    }
    const std::string cid = common::ComputeCidV0(request.code);
    LocalOps ops(settings, cid);
    const std::string pkp = common::ChecksumAddress(ops.pkp_address());
    if (!params.HasMember("pkpId")) {
        params.AddMember("pkpId", rapidjson::Value(pkp.c_str(), params.GetAllocator()), params.GetAllocator());
    }
    RunRequest run;
    run.code = request.code;
    run.params_json = common::JsonSerialize(params);
    if (run.params_json.size() > settings.max_js_params_bytes) {
        return MakeError(ErrorKind::TooLarge, "js_params_too_large", "--params is " + std::to_string(run.params_json.size()) +
                                                                         " bytes as JSON; the limit is " + std::to_string(settings.max_js_params_bytes));
    }
    run.limits = settings.run;
    run.lower = true;
    SIGIL_TRY(zygote, Zygote::Start(ZygoteOptions{settings.sandbox_path, {}}));
    // The zygote preloads its heap after exec; a first empty run waits that out, so the time shown
    // is the action's (its lowering included), not the zygote's start.
    LocalOps warm_up(settings, cid);
    SIGIL_TRY(warm, RunAction(*zygote, RunRequest{"function main() {}", "{}", settings.run, false}, warm_up));
    (void)warm;
    std::optional<RunOutcome> local_outcome;
    const auto start = std::chrono::steady_clock::now();
    // Imports by CID as the service resolves them (runner.cpp): the child lowers the action and
    // stops before any of its code runs when the lowered text imports modules it was not sent; they
    // come from --modules (code_cache_dir: files named by their CID) or [actions] ipfs_gateways, each
    // checked against its CID, and the run starts again with them (one round per level of the graph).
    CodeCache modules(SANDBOX_MAX_MODULES * MAX_LOCAL_IMPORT_ROUNDS);
    for (int round = 1;; ++round) {
        if (!run.lower && !ParseImportHeader(run.code).cids.empty()) {
            const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
            const std::int64_t left = static_cast<std::int64_t>(settings.run.time_ms) - spent.count();
            SIGIL_TRY(resolved, ResolveModules(settings, modules, {}, cid, run.code, true,
                                               static_cast<std::uint64_t>(std::max<std::int64_t>(left, 1))));
            run.modules = std::move(resolved).value();
        }
        SIGIL_TRY(outcome, RunAction(*zygote, run, ops));
        const bool again = round < MAX_LOCAL_IMPORT_ROUNDS && outcome->end == RunEnd::ScriptError &&
                           outcome->error.code == "sigil_imports_unresolved" && ImportsUnsent(*outcome, run.modules);
        if (outcome->lowered_code) {
            run.code = std::move(*outcome->lowered_code);
            run.lower = false;
        }
        outcome->lowered_code.reset();
        for (auto& [module, text] : outcome->lowered_modules) KeepLoweredModule(settings, modules, {}, module, std::move(text));
        outcome->lowered_modules.clear();
        if (again) continue;
        local_outcome = std::move(outcome).value();
        break;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const ActionResult result{cid, std::move(*local_outcome), ops.TakeLogs()};
    std::string json = result.ResponseJson();
    json.pop_back();  // the closing brace: the local fields follow
    char time_ms[32];
    std::snprintf(time_ms, sizeof time_ms, "%.1f", ms);
    return "{\"cid\":" + common::JsonQuote(cid) + "," + json.substr(1) + ",\"time_ms\":" + time_ms +
           ",\"pkp_id\":" + common::JsonQuote(pkp) + ",\"local\":true}";
}

int RunLocalMain(int argc, char** argv) {
    std::string file, params = "{}", config_path, modules_dir;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--params") == 0 && i + 1 < argc) params = argv[++i];
        else if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_path = argv[++i];
        else if (std::strcmp(argv[i], "--modules") == 0 && i + 1 < argc) modules_dir = argv[++i];
        else if (argv[i][0] != '-' && file.empty()) file = argv[i];
        else return Usage();
    }
    if (file.empty()) return Usage();
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "sigil-worker: cannot read %s\n", file.c_str());
        return 2;
    }
    LocalRunRequest request{std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), params};
    auto config = config_path.empty() ? common::Config::Parse("") : common::Config::LoadFile(config_path);
    if (!config.ok()) {
        std::fprintf(stderr, "sigil-worker: %s\n", config.error().message.c_str());
        return 2;
    }
    auto settings = ActionSettings::FromConfig(*config);
    if (!settings.ok()) {
        std::fprintf(stderr, "sigil-worker: %s\n", settings.error().message.c_str());
        return 2;
    }
    // The sandbox is the one beside this program, whatever the file names for the service's host.
    settings->sandbox_path.clear();
    // Modules imported by CID: the folder given (files named by their CID, each checked against it;
    // what a gateway sends is kept there too), else none of the service's cache folder.
    settings->code_cache_dir = modules_dir;
    if (!modules_dir.empty() && !std::filesystem::is_directory(modules_dir)) {
        std::fprintf(stderr, "sigil-worker: --modules %s is not a directory\n", modules_dir.c_str());
        return 2;
    }
    auto answer = RunLocal(*settings, request);
    if (!answer.ok()) {
        std::fprintf(stderr, "sigil-worker: %s: %s\n", answer.error().code.c_str(), answer.error().message.c_str());
        return answer.error().kind == ErrorKind::InvalidInput || answer.error().kind == ErrorKind::TooLarge ? 2 : 1;
    }
    std::printf("%s\n", answer->c_str());
    return 0;
}

}  // namespace sigil::workers
