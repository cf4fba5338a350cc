// sigil-keyd: the only process holding the root key (DESIGN.md section 1). See keyd/protocol.md.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/hex.h"
#include "common/key_derivation.h"
#include "common/log.h"
#include "common/secp256k1.h"
#include "keyd/hardening.h"
#include "keyd/key_service.h"
#include "keyd/key_source.h"
#include "keyd/tee_key_source.h"
#include "keyd/options.h"
#include "keyd/server.h"

using namespace sigil;

namespace {

int Fail(const common::Error& e) {
    common::LogError(e.code + ": " + e.message);
    return 1;
}

// The API payer and admin payer addresses this root key yields, so the contract can be deployed
// with them before keyd serves (the dev chain script and operators use it).
int PrintPayers(const common::SecretBytes& root, std::uint32_t count) {
    auto address = [](common::Result<common::SecretBytes> secret) -> common::Result<std::string> {
        if (!secret.ok()) return secret.error();
        auto key = common::PrivateKey::FromBytes(secret->view());
        if (!key.ok()) return key.error();
        return common::ChecksumAddress(key->Address());
    };
    std::string out = "{\"api_payers\":[";
    for (std::uint32_t i = 0; i < count; ++i) {
        auto a = address(common::DerivePayerKey(root, i));
        if (!a.ok()) return Fail(a.error());
        out += (i == 0 ? "\"" : ",\"") + *a + "\"";
    }
    auto admin = address(common::DeriveAdminPayerKey(root));
    if (!admin.ok()) return Fail(admin.error());
    out += "],\"admin_payer\":\"" + *admin + "\"}\n";
    std::fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    common::SetLogComponent("keyd");
    // Before anything secret exists in this process.
    keyd::HardeningReport hardening;
    if (auto s = keyd::HardenProcess(&hardening); !s.ok()) return Fail(s.error());
    if (!hardening.memory_locked) common::LogWarn(hardening.memory_note);

    const std::vector<std::string_view> args(argv + 1, argv + argc);
    auto options = keyd::ParseKeydOptions(args);
    if (!options.ok()) {
        common::LogError(options.error().message);
        std::fputs(keyd::KeydUsage().data(), stderr);
        return 2;
    }
    if (options->help) {
        std::fputs(keyd::KeydUsage().data(), stdout);
        return 0;
    }

    std::unique_ptr<keyd::KeySource> source;
    if (!options->root_key_file.empty()) {
        source = std::make_unique<keyd::FileKeySource>(options->root_key_file);
    } else {
        source = std::make_unique<keyd::TeeKeySource>(options->tee_key_service);
    }
    common::LogInfo("root key from " + source->Describe());
    auto root = source->LoadRootKey();
    if (!root.ok()) return Fail(root.error());
    if (options->print_payers) return PrintPayers(*root, options->payers);

    keyd::KeyPolicy policy;
    policy.chain_id = options->chain_id;
    policy.contract = options->contract;
    policy.payer_count = options->payers;
    if (options->max_fee_per_gas) policy.max_fee_per_gas = options->max_fee_per_gas;
    if (options->max_priority_fee_per_gas) policy.max_priority_fee_per_gas = options->max_priority_fee_per_gas;
    if (options->max_gas_limit) policy.max_gas_limit = options->max_gas_limit;
    auto service = keyd::KeyService::Create(std::move(root).value(), policy);
    if (!service.ok()) return Fail(service.error());

    keyd::ServerOptions server_options;
    server_options.socket_path = options->socket_path;
    server_options.allowed_uids = options->allowed_uids;
    server_options.socket_group = options->socket_group;
    server_options.max_connections = options->max_connections;
    server_options.key_source = options->root_key_file.empty() ? keyd::KeySourceKind::Tee : keyd::KeySourceKind::File;
    keyd::Server server(std::move(server_options), *service);
    server.InstallStopSignals();
    if (auto s = server.Listen(); !s.ok()) return Fail(s.error());
    if (auto s = server.Run(); !s.ok()) return Fail(s.error());
    return 0;
}
