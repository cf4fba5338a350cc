// Public configuration (chain, payers) and the OpenAPI document of the route table.
#include <cstdint>
#include <memory>

#include "common/hex.h"
#include "common/json.h"
#include "workers/api/api.h"
#include "workers/http/openapi.h"
#include "workers/api/schemas.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;

struct KnownChain {
    std::uint64_t id;
    const char* name;
    const char* token;
    bool testnet;
};

// Names for the chains a deployment is likely to use; any other id is reported as "chain-<id>".
constexpr KnownChain kKnownChains[] = {
    {1, "ethereum", "ETH", false},          {10, "optimism", "ETH", false},
    {8453, "base", "ETH", false},           {42161, "arbitrum", "ETH", false},
    {11155111, "sepolia", "ETH", true},     {84532, "base-sepolia", "ETH", true},
    {421614, "arbitrum-sepolia", "ETH", true}, {31337, "anvil", "ETH", true},
};

std::string AddressJson(const common::Address20& a) { return common::JsonQuote(common::HexEncode(a, true)); }

common::Error NoChain() {
    return MakeError(ErrorKind::Unavailable, "chain_not_configured", "this instance has no chain configured");
}

common::Result<HttpResponse> NodeChainConfig(Service& service) {
    if (!service.HasChain()) return NoChain();
    const std::uint64_t id = service.ChainId();
    std::string name = "chain-" + std::to_string(id);
    std::string token = "ETH";
    bool testnet = false;
    for (const auto& c : kKnownChains) {
        if (c.id == id) {
            name = c.name;
            token = c.token;
            testnet = c.testnet;
        }
    }
    // Never the RPC URL: it may carry a provider credential, and clients bring their own node.
    return JsonResponse(200, "{\"chain_name\":" + common::JsonQuote(name) + ",\"chain_id\":" + std::to_string(id) +
                                 ",\"is_evm\":true,\"testnet\":" + (testnet ? "true" : "false") +
                                 ",\"token\":" + common::JsonQuote(token) +
                                 ",\"contract_address\":" + AddressJson(service.ContractAddress()) + "}");
}

common::Result<HttpResponse> ApiPayers(Service& service) {
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(payers, (*reader)->GetApiPayers());
    std::string body = "[";
    for (std::size_t i = 0; i < payers->size(); ++i) body += (i ? "," : "") + AddressJson((*payers)[i]);
    return JsonResponse(200, body + "]");
}

common::Result<HttpResponse> AdminApiPayer(Service& service) {
    SIGIL_TRY(reader, service.Reader());
    SIGIL_TRY(admin, (*reader)->AdminPayer());
    return JsonResponse(200, AddressJson(*admin));
}

}  // namespace

void AddConfigRoutes(Router& router, Service& service) {
    router.Add({"GET", "/core/v1/get_node_chain_config", AuthRequirement::None, BodyKind::None,
                [&service](RequestContext&) { return NodeChainConfig(service); },
                "Chain id and AccountConfig contract address (never the RPC URL)", "configuration", "",
                ApiSchema("config.json#/ChainConfig")});
    router.Add({"GET", "/core/v1/get_api_payers", AuthRequirement::None, BodyKind::None,
                [&service](RequestContext&) { return ApiPayers(service); },
                "Addresses of the API payer wallets that relay writes", "configuration", "",
                ApiSchema("config.json#/AddressList")});
    router.Add({"GET", "/core/v1/get_admin_api_payer", AuthRequirement::None, BodyKind::None,
                [&service](RequestContext&) { return AdminApiPayer(service); },
                "Address of the admin payer wallet", "configuration", "", ApiSchema("common.json#/Address")});

    // Generated at the first request, not here: routes registered after this call (test routes,
    // later resources) must appear too. Workers are single-threaded, so the cache needs no lock.
    auto cached = std::make_shared<std::string>();
    router.Add({"GET", "/core/v1/openapi.json", AuthRequirement::None, BodyKind::None,
                [&router, cached](RequestContext&) -> common::Result<HttpResponse> {
                    if (cached->empty()) {
                        auto doc = GenerateOpenApi(router.routes(),
                                                   {"Sigil", "v1", "Account-scoped secure action execution service"});
                        if (!doc.ok()) return doc.error();
                        *cached = std::move(doc).value();
                    }
                    return JsonResponse(200, *cached);
                },
                "This OpenAPI 3 document", "system", "", ApiSchema("config.json#/OpenApiDocument")});
}

}  // namespace sigil::workers
