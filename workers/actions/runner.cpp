#include "workers/actions/runner.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/cid.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/secp256k1.h"
#include "workers/actions/imports.h"
#include "workers/actions/lowerer_client.h"
#include "workers/actions/ops.h"
#include "workers/sandbox/protocol/import_header.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// The longest a run waits for sigil-lowerer before the child lowers instead (the run's time limit,
// if shorter; lowerer_client.h shortens it further by the source's size).
constexpr std::uint64_t MAX_LOWERER_WAIT_MS = 10000;

// Runs of one request whose child stopped, before any of the action's code ran, to say that what it
// lowered imports modules the worker could not know of (child.h): one per level of an import graph
// nothing had lowered yet, when sigil-lowerer is not there to lower it up front.
constexpr int MAX_IMPORT_ROUNDS = 8;

// What Sigil.Actions.caller() answers: who called, as the worker authenticated the request.
std::string CallerJson(const Caller& caller, const std::string& client_address) {
    return "{\"apiKeyHash\":" + common::JsonQuote(common::HexEncode(caller.key_hash.Word(), true)) +
           ",\"accountHash\":" + common::JsonQuote(common::HexEncode(caller.account_hash.Word(), true)) +
           ",\"clientAddress\":" + (client_address.empty() ? std::string("null") : common::JsonQuote(client_address)) + "}";
}

}  // namespace

Result<std::unique_ptr<ActionRunner>> ActionRunner::Create(ActionSettings settings) {
    // Under the supervisor: its shared zygotes. Without one (a worker started by hand): our own.
    const char* shared = std::getenv(ZYGOTE_SOCKET_ENV);
    SIGIL_TRY(zygote, shared != nullptr && *shared != '\0' ? Zygote::Connect(shared)
                                                            : Zygote::Start(ZygoteOptions{settings.sandbox_path, {}}));
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
    if (body->HasMember("receipt") && !(*body)["receipt"].IsNull()) {
        if (!(*body)["receipt"].IsBool()) {
            return MakeError(ErrorKind::InvalidInput, "invalid_field", "receipt must be a boolean");
        }
        out.receipt = (*body)["receipt"].GetBool();
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

Result<ActionResult> ActionRunner::Run(Service& service, const Caller& caller, const ActionRequest& request,
                                       const RunAdmission& admission) {
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
    run.cid = cid;
    run.caller_json = CallerJson(caller, request.client_address);
    run.limits = m_settings.run;
    // With the code at hand, admission (the credit hold) overlaps the child's fork; code that
    // must come from a gateway is fetched only for a run already admitted.
    bool admitted_here = false;
    if (const auto* hit = m_cache.Find(cid)) {
        run.code = hit->code;
        run.lower = !hit->lowered;
    } else if (auto lowered = ReadLoweredCode(m_settings, cid, m_lowered_key)) {
        run.code = *lowered;
        run.lower = false;
        m_cache.Put(cid, CodeCache::Entry{std::move(*lowered), true});
    } else if (request.code) {
        run.code = *request.code;
        run.lower = true;
    } else {
        if (admission.admit) SIGIL_TRY_STATUS(admission.admit(run.limits));
        admitted_here = true;
        GatewayMiss miss = GatewayMiss::Broken;
        auto entry = LoadCode(m_settings, m_cache, cid, run.limits.time_ms, &miss);
        if (!entry.ok()) {
            // Waiting for a CID no gateway has is the caller's choice, and costs run time.
            if (miss == GatewayMiss::Missing && admission.started) admission.started();
            return entry.error();
        }
        run.code = std::move(entry->code);
        run.lower = !entry->lowered;
    }

    // Source nobody has lowered yet: sigil-lowerer lowers it several times faster than the child
    // would (lowerer_client.h), for a run already admitted; without it the child lowers.
    if (run.lower && !m_settings.lowerer_socket.empty()) {
        if (!admitted_here && admission.admit) SIGIL_TRY_STATUS(admission.admit(run.limits));
        admitted_here = true;
        const int timeout_ms = static_cast<int>(std::min<std::uint64_t>(run.limits.time_ms, MAX_LOWERER_WAIT_MS));
        if (auto lowered = LowerWithDaemon(m_settings.lowerer_socket, run.code, timeout_ms)) {
            WriteLoweredCode(m_settings, cid, *lowered, m_lowered_key);
            m_cache.Put(cid, CodeCache::Entry{*lowered, true});
            run.code = std::move(*lowered);
            run.lower = false;
        }
    }

    RunOps ops(service, caller, m_settings, cid, request.pkp);
    for (int round = 1;; ++round) {
        // Lowered text names the modules it imports (workers/actions/imports.h): they are resolved,
        // from a gateway only for a run already admitted; cached ones leave admission to overlap the fork.
        if (!run.lower && !ParseImportHeader(run.code).cids.empty()) {
            auto admit = [&]() -> common::Status {
                if (!admitted_here && admission.admit) SIGIL_TRY_STATUS(admission.admit(run.limits));
                admitted_here = true;
                return common::Success();
            };
            GatewayMiss miss = GatewayMiss::Broken;
            auto modules =
                ResolveModules(m_settings, m_modules, m_lowered_key, cid, run.code, true, run.limits.time_ms, &miss, admit);
            if (!modules.ok()) {
                if (miss == GatewayMiss::Missing && admission.started) admission.started();
                return modules.error();
            }
            run.modules = std::move(modules).value();
        }
        SIGIL_TRY(outcome, RunAction(m_zygote, run, ops, RunAdmission{admitted_here ? nullptr : admission.admit, admission.started}));
        admitted_here = true;
        // keyd or the chain failed under an op: the caller gets that typed error (502/503/504), as for a
        // failure before the run, rather than a script error that was not the script's.
        if (auto failure = ops.TakeServiceFailure(); failure && outcome->end == RunEnd::Stopped) return *failure;
        const bool again = round < MAX_IMPORT_ROUNDS && outcome->end == RunEnd::ScriptError &&
                           outcome->error.code == "sigil_imports_unresolved" && ImportsUnsent(*outcome, run.modules);
        if (outcome->lowered_code) {
            WriteLoweredCode(m_settings, cid, *outcome->lowered_code, m_lowered_key);
            m_cache.Put(cid, CodeCache::Entry{*outcome->lowered_code, true});
            run.code = std::move(*outcome->lowered_code);
            run.lower = false;
        }
        outcome->lowered_code.reset();
        for (auto& [module, text] : outcome->lowered_modules) {
            KeepLoweredModule(m_settings, m_modules, m_lowered_key, module, std::move(text));
        }
        outcome->lowered_modules.clear();
        // Again, with the graph the lowered text now names.
        if (again) continue;
        return ActionResult{cid, std::move(outcome).value(), ops.TakeLogs()};
    }
}

// The answer ------------------------------------------------------------------------------------

namespace {

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

namespace {

// A script's error code: what the lowering refused (syntax_error, or import_not_allowed, which
// lower.js puts after the location at the start of its message) or what the script threw.
std::string ScriptErrorCode(const ScriptError& error) {
    if (error.code != "SyntaxError") return "script_error";
    constexpr std::string_view IMPORT = ": import_not_allowed: ";
    const auto at = error.message.find(IMPORT);
    return at != std::string::npos && error.message.rfind("line ", 0) == 0 && error.message.find(": ") == at
               ? "import_not_allowed"
               : "syntax_error";
}

}  // namespace

std::string ActionResult::ResponseMember() const {
    return outcome.end == RunEnd::Completed && !outcome.response_json.empty() ? outcome.response_json : "\"\"";
}

std::string ActionResult::ErrorCode() const {
    if (outcome.end == RunEnd::Completed) return "";
    if (outcome.end == RunEnd::ScriptError) return ScriptErrorCode(outcome.error);
    return outcome.error.code.empty() ? EndCode(outcome.end) : outcome.error.code;
}

std::string ActionResult::ResponseJson() const {
    std::string out = "{\"response\":" + ResponseMember();
    out += ",\"logs\":" + common::JsonQuote(logs);
    out += ",\"has_error\":";
    if (outcome.end == RunEnd::Completed) return out + "false}";
    const bool script = outcome.end == RunEnd::ScriptError;
    out += "true,\"error\":{\"code\":" + common::JsonQuote(ErrorCode());
    if (script) out += ",\"name\":" + common::JsonQuote(outcome.error.code);
    out += ",\"message\":" + common::JsonQuote(outcome.error.message);
    if (!outcome.error.stack.empty()) out += ",\"stack\":" + common::JsonQuote(outcome.error.stack);
    return out + "}}";
}

std::string ActionResult::ErrorText() const {
    if (outcome.end == RunEnd::ScriptError && !outcome.error.code.empty()) {
        return outcome.error.code + ": " + outcome.error.message;
    }
    return outcome.error.message.empty() ? EndCode(outcome.end) : outcome.error.message;
}

}  // namespace sigil::workers
