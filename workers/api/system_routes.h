// Service-level endpoints: GET /health, GET /core/v1/version (the attestation routes: attestation.h).
#pragma once

#include <string>

#include "common/scoreboard.h"
#include "keyd/client/keyd_client.h"
#include "workers/http/router.h"

namespace sigil::workers {

struct SystemInfo {
    std::string version;                              // e.g. "0.1.0"
    const common::Scoreboard* scoreboard = nullptr;   // null when the worker runs without a supervisor
    KeydClient* keyd = nullptr;                       // null when no keyd is configured
    std::uint32_t max_workers = 0;                    // [supervisor] max_workers, shown with the pool
};

// Adds the two routes to `router`. `info` is copied; the scoreboard must outlive the router.
//   GET /health          200 {"status":"ok","version":...,"workers":{"total","idle","busy","starting",
//                        "draining","capacity","max_workers","requests_served"},"in_flight":{"total",
//                        "run","chain","receipt","keyd","gateway","fetch","ledger"},"keyd":"ok"}
//                        ("workers" and "in_flight" omitted without scoreboard, "keyd" without keyd;
//                        in_flight counts busy workers by what they wait on; with a scoreboard, "chain" is "unavailable"
//                        while the chain circuit is open); 503 with "status":"degraded","keyd":"unavailable"
//                        when keyd does not answer a ping, so a load balancer takes the instance out
//   GET /core/v1/version 200 {"service":"sigil","version":...,"api":"v1"}
void AddSystemRoutes(Router& router, const SystemInfo& info);

// Routes for the integration tests only ([worker] test_routes = true):
//   POST /core/v1/test/echo   JSON body required; answers {"echo": <the body>}
//   GET  /core/v1/test/sleep?ms=N   sleeps N ms (0..600000, else 400 invalid_sleep), answers {"slept_ms":N}
void AddTestRoutes(Router& router);

}  // namespace sigil::workers
