#include "workers/api/api.h"

#include "common/json.h"
#include "workers/api/guardrails.h"

namespace sigil::workers {

HttpResponse SuccessResponse() { return JsonResponse(200, R"({"success":true})"); }

common::Result<HttpResponse> MintedAnswer(const common::Status& write, const std::string& members) {
    if (write.ok()) return JsonResponse(200, "{" + members + "}");
    if (write.error().tx_hash.empty()) return write.error();
    return JsonResponse(202, "{" + members + ",\"pending\":true,\"tx_hash\":" + common::JsonQuote(write.error().tx_hash) + "}");
}

void AddApiRoutes(Router& router, Service& service, ActionRunner* runner, BillingContext billing) {
    router.SetAuthenticator(MakeAuthenticator(service));
    // Every request starts with no write credential: authentication (or new_account) sets its own.
    router.SetRequestHook([&service] {
        service.Credential().Clear();
        service.StartChainBudget();
    });
    router.SetRequestEndHook([&service] { service.Credential().Clear(); });
    AddAccountRoutes(router, service);
    AddWalletRoutes(router, service);
    AddGroupRoutes(router, service);
    AddActionRoutes(router, service);
    AddConfigRoutes(router, service);
    AddChainSecuredRoutes(router, service);
    AddRunRoutes(router, service, runner, billing);
    AddBillingRoutes(router, service, billing);
    AddRunHistoryRoutes(router, service, billing);
    AddGuardrailRoutes(router, service, billing);
    // Last: they wrap every route above (charges for relayed writes, Idempotency-Key on writes).
    ApplyWriteLayers(router, service, billing);
    // Outermost: a key's allowed Origins are checked before any other layer does work.
    ApplyOriginLayer(router, billing);
}

}  // namespace sigil::workers
