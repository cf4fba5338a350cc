// GET /metrics: the instance's Prometheus exposition (issue 29), served only on nginx's operator
// listener. The counters come from the pool's shared mapping (common/metrics.h), so any worker's
// scrape sees every worker's counts; pool gauges from the scoreboard, the chain circuit, the
// evidence set's age and keyd's own counters are read at scrape time.
#pragma once

#include <string>

#include "common/scoreboard.h"
#include "keyd/client/keyd_client.h"
#include "workers/http/router.h"

namespace sigil::workers {

struct MetricsRouteInfo {
    std::string version;                             // build: SIGIL_VERSION
    std::string commit;                              // build: the git commit it was built from
    const common::Scoreboard* scoreboard = nullptr;  // null without a supervisor: no pool series
    KeydClient* keyd = nullptr;                      // null without keyd: no keyd series
    std::string evidence_dir;                        // [metrics] evidence_dir; "" = no evidence series
    std::uint32_t max_workers = 0;                   // [supervisor] max_workers
    std::string nginx_tally_dir;                     // [metrics] nginx_tally_dir; "" = no nginx refusal series
};

// Adds GET /metrics (operator-only; the router must outlive the route, whose handler reads its
// route table for the `route` label). Without the shared counters (metrics off) it answers 404
// not_found, as if absent.
void AddMetricsRoute(Router& router, MetricsRouteInfo info);

}  // namespace sigil::workers
