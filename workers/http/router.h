// The route table: one entry per endpoint (method, path, auth, body kind, handler, schemas), and the
// dispatch that turns a request into a response with JSON errors for every refusal.
//
// Adding an endpoint is one Router::Add call; the same entries feed the OpenAPI generator, so the
// documentation cannot drift from the code.
#pragma once

#include <any>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "common/result.h"
#include "workers/http/http.h"

namespace sigil::workers {

// Who may call a route. The router itself only knows None; anything else is checked by the
// Authenticator installed with SetAuthenticator (the API-key layer adds its kinds here).
enum class AuthRequirement {
    None,          // public
    ApiKey,        // X-Api-Key or Authorization: Bearer; any valid account or usage key
    AccountOwner,  // the account's master key
};

enum class BodyKind {
    None,          // body ignored (GET and friends)
    Json,          // body required: Content-Type application/json (else 415), valid JSON (else 422)
    OptionalJson,  // like Json when a body is present; an empty body passes with no document
};

// What the billing layer charges for a route (DESIGN.md section 9), declared with the route as its
// auth and body kind are, so no layer decides by the route's path.
enum class Charge {
    None,                // free (reads, public endpoints), or charged by its own handler (a run's time)
    Write,               // a relayed write: the write price held before it, kept only when it answers 2xx
    WriteMovingBalance,  // a Write that replaces the account's admin wallet (conversion): the balance follows
    StarterCredit,       // mints an account: the customer its handler names in new_customer gets the starter credit
    RunTime,             // an action run: its handler holds and charges the run's started seconds itself
};

// What a handler gets. `json` is set iff the route has a JSON body kind and a body was sent.
// `auth` holds whatever the Authenticator returned (empty for AuthRequirement::None).
struct RequestContext {
    const HttpRequest& request;
    const rapidjson::Document* json = nullptr;
    std::any auth;
    // Set by a Charge::StarterCredit handler: the customer it created (the new account's admin wallet,
    // 0x + 40 lower-case hex), handed to the charging layer instead of that layer reading the answer.
    std::string new_customer;
    // Set by a handler refusing for a while (a key's rate limit): the Retry-After seconds its error
    // answer carries; 0 = none.
    int retry_after_s = 0;
};

using Handler = std::function<common::Result<HttpResponse>(RequestContext& ctx)>;

// Checks credentials for a route; returns what handlers need to know about the caller (account,
// key scopes...) or an error (Unauthenticated -> 401, Forbidden -> 403, ...).
using Authenticator = std::function<common::Result<std::any>(const HttpRequest& request, AuthRequirement requirement)>;

struct Route {
    std::string method;  // "GET", "POST", ...
    std::string path;    // exact match, e.g. "/core/v1/version"
    AuthRequirement auth = AuthRequirement::None;
    BodyKind body = BodyKind::None;
    Handler handler;
    // For the OpenAPI generator: one-line summary, a tag, and JSON Schemas (as JSON text; "" when
    // there is nothing to describe) of the request (body for POST, query parameters for GET, as
    // an object schema whose properties are the parameters) and of the 200 response.
    std::string summary;
    std::string tag;
    std::string request_schema;
    std::string response_schema;
    // The write mints something the client must keep and may answer 202 (broadcast, unconfirmed:
    // the 200 answer plus "pending":true and "tx_hash"); documented as such in OpenAPI.
    bool may_answer_pending = false;
    Charge charge = Charge::None;
    // Served only on nginx's operator listener (HttpRequest::operator_listener; 404 elsewhere, as if
    // absent) and left out of the OpenAPI document: /metrics.
    bool operator_only = false;
};

class Router {
public:
    // Adds a route. A second route with the same method and path is a programming error and aborts.
    void Add(Route route);

    void SetAuthenticator(Authenticator authenticator) { m_authenticator = std::move(authenticator); }
    // Replaces the handler of every route added so far with wrap(route, its handler): layers that
    // apply to many routes at once (charging, idempotency keys) without each handler knowing.
    void WrapHandlers(const std::function<Handler(const Route& route, Handler handler)>& wrap) {
        for (auto& r : m_routes) r.handler = wrap(r, r.handler);
    }
    // Called at the start of every dispatched request, before authentication (the API starts the
    // request's chain budget there).
    void SetRequestHook(std::function<void()> hook) { m_request_hook = std::move(hook); }
    // Called at the end of every dispatched request, after its handler returned or threw (the API
    // wipes the request's write credential there, so no key outlives its request in the worker).
    void SetRequestEndHook(std::function<void()> hook) { m_request_end_hook = std::move(hook); }
    // Answers an OPTIONS request to a known path that has no OPTIONS route (a browser's CORS
    // preflight), given the path's methods; without one, such a request is 405 like any other method.
    using Preflight = std::function<HttpResponse(const HttpRequest& request, const std::set<std::string>& methods)>;
    void SetPreflight(Preflight preflight) { m_preflight = std::move(preflight); }

    // Routes a request and always returns a complete response (FinalizeResponse applied):
    //   unknown path -> 404 not_found; known path, other method -> 405 method_not_allowed with Allow;
    //   JSON body with another Content-Type -> 415 unsupported_media_type; invalid JSON or invalid
    //   UTF-8 -> 422 malformed_json; auth failure -> the Authenticator's error (500
    //   auth_not_configured when none is installed); handler error -> its mapped status; an
    //   exception from a handler -> 500 internal_error (the worker keeps serving).
    HttpResponse Dispatch(const HttpRequest& request) const;

    const std::vector<Route>& routes() const { return m_routes; }

private:
    // `route_index` is set to the matched route's index + 1 (0 = none): the requests' metrics label.
    HttpResponse DispatchUnfinalized(const HttpRequest& request, std::uint32_t& route_index) const;
    std::vector<Route> m_routes;
    Authenticator m_authenticator;
    std::function<void()> m_request_hook;
    std::function<void()> m_request_end_hook;
    Preflight m_preflight;
};

}  // namespace sigil::workers
