#include "workers/actions/imports.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <utility>

#include "common/log.h"
#include "workers/actions/lowerer_client.h"
#include "workers/sandbox/protocol/import_header.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

namespace {

// The shared folder's name for a module's lowered text (never an action's: code_source.h).
std::string ModuleKey(const std::string& cid) { return cid + ".module"; }

// The longest one module waits for sigil-lowerer (as an action's source does in runner.cpp).
constexpr std::uint64_t MAX_LOWERER_WAIT_MS = 10000;

}  // namespace

void KeepLoweredModule(const ActionSettings& settings, CodeCache& modules, common::ByteView lowered_key,
                       const std::string& cid, std::string lowered) {
    WriteLoweredCode(settings, ModuleKey(cid), lowered, lowered_key);
    modules.Put(cid, CodeCache::Entry{std::move(lowered), true});
}

Result<std::vector<SandboxModule>> ResolveModules(const ActionSettings& settings, CodeCache& modules,
                                                  common::ByteView lowered_key, const std::string& cid,
                                                  std::string_view code, bool lowered, std::uint64_t budget_ms,
                                                  GatewayMiss* miss, const std::function<common::Status()>& before_gateway) {
    std::vector<SandboxModule> out;
    if (!lowered) return out;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(std::min<std::uint64_t>(budget_ms, 24ull * 3600 * 1000));
    // Breadth first, each CID once: a cycle (which CIDs make all but impossible: a module's CID
    // hashes the CIDs it imports) ends where it started.
    std::deque<std::pair<std::string, std::string>> queue;  // (module, who imports it)
    for (auto& imported : ParseImportHeader(code).cids) queue.emplace_back(std::move(imported), cid);
    std::set<std::string> seen;
    std::size_t bytes = 0;
    while (!queue.empty()) {
        auto [module, importer] = std::move(queue.front());
        queue.pop_front();
        if (!seen.insert(module).second) continue;
        if (out.size() == SANDBOX_MAX_MODULES) {
            return MakeError(ErrorKind::TooLarge, "imports_too_large",
                             "the action imports more than " + std::to_string(SANDBOX_MAX_MODULES) +
                                 " modules (counting what they import)");
        }
        CodeCache::Entry entry;
        if (const auto* hit = modules.Find(module)) {
            entry = *hit;
        } else if (auto text = ReadLoweredCode(settings, ModuleKey(module), lowered_key)) {
            entry = CodeCache::Entry{std::move(*text), true};
            modules.Put(module, entry);
        } else {
            if (before_gateway) {
                if (auto admitted = before_gateway(); !admitted.ok()) return admitted.error();
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
            auto loaded = LoadCode(settings, modules, module, static_cast<std::uint64_t>(std::max<std::int64_t>(left.count(), 1)),
                                   miss);
            if (!loaded.ok()) {
                auto error = loaded.error();
                error.message = "the module ipfs://" + module + " imported by " + importer + ": " + error.message;
                return error;
            }
            entry = std::move(loaded).value();
        }
        if (!entry.lowered && !settings.lowerer_socket.empty()) {
            if (before_gateway) {
                if (auto admitted = before_gateway(); !admitted.ok()) return admitted.error();
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
            const int wait_ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 1, MAX_LOWERER_WAIT_MS));
            if (auto text = LowerWithDaemon(settings.lowerer_socket, std::string(MODULE_LOWERING_PRAGMA) + entry.code, wait_ms)) {
                entry = CodeCache::Entry{*text, true};
                KeepLoweredModule(settings, modules, lowered_key, module, std::move(*text));
            }
        }
        bytes += entry.code.size();
        if (bytes > SANDBOX_MAX_MODULE_BYTES) {
            return MakeError(ErrorKind::TooLarge, "imports_too_large",
                             "the modules the action imports come to more than " +
                                 std::to_string(SANDBOX_MAX_MODULE_BYTES >> 20) + " MiB (counting what they import)");
        }
        if (entry.lowered) {
            for (auto& imported : ParseImportHeader(entry.code).cids) queue.emplace_back(std::move(imported), module);
        }
        out.push_back(SandboxModule{module, std::move(entry.code), !entry.lowered});
    }
    return out;
}

bool ImportsUnsent(const RunOutcome& outcome, const std::vector<SandboxModule>& sent) {
    auto unsent = [&sent](std::string_view code) {
        for (const auto& cid : ParseImportHeader(code).cids) {
            if (std::none_of(sent.begin(), sent.end(), [&cid](const SandboxModule& m) { return m.cid == cid; })) return true;
        }
        return false;
    };
    if (outcome.lowered_code && unsent(*outcome.lowered_code)) return true;
    return std::any_of(outcome.lowered_modules.begin(), outcome.lowered_modules.end(),
                       [&unsent](const auto& module) { return unsent(module.second); });
}

}  // namespace sigil::workers
