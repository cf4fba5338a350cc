#include "workers/api/metrics_route.h"

#include <dirent.h>
#include <sys/stat.h>

#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/prometheus_text.h"

namespace sigil::workers {
namespace {

using common::MetricLabels;
using common::PrometheusText;

constexpr const char* kStatusClasses[common::STATUS_CLASSES] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

std::uint64_t Load(const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); }

// The route label: "GET /core/v1/version"; index 0 (nothing matched) is "unmatched".
std::string RouteLabel(const Router& router, std::uint32_t index) {
    if (index == 0 || index > router.routes().size()) return "unmatched";
    const Route& r = router.routes()[index - 1];
    return r.method + " " + r.path;
}

void Requests(PrometheusText& out, const common::SharedMetrics& m, const Router& router) {
    out.Family("sigil_http_requests_total", "counter", "Requests answered by the workers, by route and status class.");
    for (std::uint32_t r = 0; r < common::METRICS_ROUTES; ++r) {
        for (std::uint32_t c = 0; c < common::STATUS_CLASSES; ++c) {
            const auto n = Load(m.requests[r][c]);
            if (n == 0) continue;  // a route never asked has no series (the table is the same in every worker)
            const std::string route = RouteLabel(router, r);
            out.Sample("sigil_http_requests_total", MetricLabels{{"route", route}, {"status", kStatusClasses[c]}}, n);
        }
    }
    out.Family("sigil_http_request_duration_seconds", "histogram", "Time from dispatch to response, by route.");
    for (std::uint32_t r = 0; r < common::METRICS_ROUTES; ++r) {
        if (Load(m.request_seconds[r].count) == 0) continue;
        const std::string route = RouteLabel(router, r);
        out.Histogram("sigil_http_request_duration_seconds", MetricLabels{{"route", route}}, m.request_seconds[r]);
    }
    out.Family("sigil_overload_refusals_total", "counter",
               "Requests a worker refused at once for lack of capacity (503 overloaded, 429 too_many_runs).");
    out.Sample("sigil_overload_refusals_total", {}, Load(m.overload_refusals));
    out.Family("sigil_history_records_dropped_total", "counter",
               "Run history records dropped: a worker's queue was full, or a worker ended with records it could not write (the history database slow or down).");
    out.Sample("sigil_history_records_dropped_total", {}, Load(m.history_dropped));
}

void Runs(PrometheusText& out, const common::SharedMetrics& m) {
    out.Family("sigil_runs_total", "counter", "Action runs by how they ended.");
    for (std::uint32_t e = 0; e < common::RUN_ENDINGS; ++e) {
        out.Sample("sigil_runs_total", MetricLabels{{"ending", common::RunEndingName(static_cast<common::RunEnding>(e))}},
                   Load(m.runs[e]));
    }
    out.Family("sigil_run_duration_seconds", "histogram", "Wall time of action runs, by ending.");
    for (std::uint32_t e = 0; e < common::RUN_ENDINGS; ++e) {
        out.Histogram("sigil_run_duration_seconds",
                      MetricLabels{{"ending", common::RunEndingName(static_cast<common::RunEnding>(e))}}, m.run_seconds[e]);
    }
    out.Family("sigil_run_cpu_seconds", "histogram",
               "CPU time (user + system) of each run's sandbox child, as its zygote reaped it (counted when "
               "the worker reads the exit report: a run that answered first is counted at that worker's next run).");
    out.Histogram("sigil_run_cpu_seconds", {}, m.run_cpu_seconds);
    out.Family("sigil_run_ops_total", "counter", "Operations actions asked their worker for, by kind.");
    for (std::uint32_t k = 0; k < common::OP_KINDS; ++k) {
        out.Sample("sigil_run_ops_total", MetricLabels{{"kind", common::OpKindName(static_cast<common::OpKind>(k))}},
                   Load(m.run_ops[k]));
    }
    out.Family("sigil_zygote_spawn_duration_seconds", "histogram",
               "From asking a sandbox zygote for a child until it has forked one.");
    out.Histogram("sigil_zygote_spawn_duration_seconds", {}, m.zygote_spawn_seconds);
    out.Family("sigil_lowerer_in_flight", "gauge", "Lowerings waiting on or inside sigil-lowerer right now.");
    out.Sample("sigil_lowerer_in_flight", {}, static_cast<double>(static_cast<std::int64_t>(Load(m.lowerer_queued))));
}

void Chain(PrometheusText& out, const common::SharedMetrics& m, const common::Scoreboard* scoreboard) {
    out.Family("sigil_chain_calls_total", "counter", "JSON-RPC calls to the chain node, by method.");
    for (std::uint32_t i = 0; i < common::CHAIN_METHODS; ++i) {
        out.Sample("sigil_chain_calls_total", MetricLabels{{"method", common::ChainMethodName(i)}}, Load(m.chain_calls[i]));
    }
    out.Family("sigil_chain_call_failures_total", "counter",
               "Chain calls that failed (transport, timeout, refused by the open circuit), by method.");
    for (std::uint32_t i = 0; i < common::CHAIN_METHODS; ++i) {
        out.Sample("sigil_chain_call_failures_total", MetricLabels{{"method", common::ChainMethodName(i)}},
                   Load(m.chain_failures[i]));
    }
    out.Family("sigil_chain_call_duration_seconds", "histogram", "Latency of chain calls, by method (retries included).");
    for (std::uint32_t i = 0; i < common::CHAIN_METHODS; ++i) {
        if (Load(m.chain_seconds[i].count) == 0) continue;
        out.Histogram("sigil_chain_call_duration_seconds", MetricLabels{{"method", common::ChainMethodName(i)}},
                      m.chain_seconds[i]);
    }
    if (scoreboard == nullptr) return;
    const auto& circuit = scoreboard->ChainCircuit();
    out.Family("sigil_chain_circuit_open", "gauge", "1 while the pool's chain circuit is open (chain requests fail at once).");
    out.Sample("sigil_chain_circuit_open", {}, std::uint64_t{circuit.open_until_ms.load(std::memory_order_acquire) != 0});
    out.Family("sigil_chain_consecutive_failures", "gauge", "Consecutive failed chain calls across the pool.");
    out.Sample("sigil_chain_consecutive_failures", {}, std::uint64_t{circuit.failures.load(std::memory_order_relaxed)});
}

void Dependencies(PrometheusText& out, const common::SharedMetrics& m) {
    out.Family("sigil_dependency_failures_total", "counter",
               "Failed calls to what the workers depend on (keyd, the ledger, gateways, fetch, the lowerer, the TEE agent).");
    for (std::uint32_t d = 0; d < common::DEPENDENCIES; ++d) {
        out.Sample("sigil_dependency_failures_total",
                   MetricLabels{{"dependency", common::DependencyName(static_cast<common::Dependency>(d))}},
                   Load(m.dependency_failures[d]));
    }
    out.Family("sigil_dependency_duration_seconds", "histogram", "Latency of calls to each dependency.");
    for (std::uint32_t d = 0; d < common::DEPENDENCIES; ++d) {
        out.Histogram("sigil_dependency_duration_seconds",
                      MetricLabels{{"dependency", common::DependencyName(static_cast<common::Dependency>(d))}},
                      m.dependency_seconds[d]);
    }
}

void Billing(PrometheusText& out, const common::SharedMetrics& m) {
    out.Family("sigil_credits_charged_cents_total", "counter", "Credits charged (holds and settlements), in cents.");
    out.Sample("sigil_credits_charged_cents_total", {}, Load(m.credits_charged_cents));
    out.Family("sigil_credits_refunded_cents_total", "counter", "Credits given back when runs settled below their hold, in cents.");
    out.Sample("sigil_credits_refunded_cents_total", {}, Load(m.credits_refunded_cents));
    out.Family("sigil_payments_confirmed_total", "counter", "Payments confirmed and credited (confirm_payment).");
    out.Sample("sigil_payments_confirmed_total", {}, Load(m.payments_confirmed));
    out.Family("sigil_payments_confirmed_cents_total", "counter", "Cents credited by confirmed payments.");
    out.Sample("sigil_payments_confirmed_cents_total", {}, Load(m.payments_confirmed_cents));
}

void Pool(PrometheusText& out, const common::SharedMetrics& m, const common::Scoreboard& scoreboard,
          std::uint32_t max_workers) {
    const auto s = scoreboard.Summarize();
    out.Family("sigil_workers", "gauge", "Workers by state.");
    const std::pair<const char*, std::uint32_t> states[] = {
        {"idle", s.idle}, {"busy", s.busy}, {"starting", s.starting}, {"draining", s.draining}};
    for (const auto& [state, n] : states) out.Sample("sigil_workers", MetricLabels{{"state", state}}, std::uint64_t{n});
    out.Family("sigil_workers_max", "gauge", "[supervisor] max_workers: the pool's bound.");
    out.Sample("sigil_workers_max", {}, std::uint64_t{max_workers});
    out.Family("sigil_in_flight_requests", "gauge", "Requests being served, by what they wait on.");
    for (std::uint32_t k = 0; k < common::ACTIVITY_KINDS; ++k) {
        out.Sample("sigil_in_flight_requests",
                   MetricLabels{{"kind", common::ActivityName(static_cast<common::Activity>(k))}}, std::uint64_t{s.in_flight[k]});
    }
    out.Family("sigil_fcgi_connections_total", "counter", "FastCGI connections the workers accepted from nginx.");
    out.Sample("sigil_fcgi_connections_total", {}, s.connections_accepted);
    out.Family("sigil_worker_starts_total", "counter", "Workers the supervisor started.");
    out.Sample("sigil_worker_starts_total", {}, Load(m.worker_starts));
    out.Family("sigil_worker_exits_total", "counter",
               "Workers that ended, by reason (recycled after max_requests, stopped by the supervisor, crashed, killed by request_hard_timeout_s).");
    for (std::uint32_t e = 0; e < common::WORKER_EXITS; ++e) {
        out.Sample("sigil_worker_exits_total",
                   MetricLabels{{"reason", common::WorkerExitName(static_cast<common::WorkerExit>(e))}}, Load(m.worker_exits[e]));
    }
    out.Family("sigil_zygote_starts_total", "counter", "Shared sandbox zygotes the supervisor started (restarts included).");
    out.Sample("sigil_zygote_starts_total", {}, Load(m.zygote_starts));
    out.Family("sigil_reloads_total", "counter", "Configuration reloads (SIGHUP) the supervisor accepted.");
    out.Sample("sigil_reloads_total", {}, Load(m.reloads));
}

// The certificate's notAfter as unix seconds, from the evidence set's cert-<domain>.pem.
std::optional<std::int64_t> CertificateExpiry(const std::string& dir) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
    if (!d) return std::nullopt;
    while (const dirent* e = readdir(d.get())) {
        const std::string name = e->d_name;
        if (name.rfind("cert-", 0) != 0 || name.size() < 9 || name.compare(name.size() - 4, 4, ".pem") != 0) continue;
        std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen((dir + "/" + name).c_str(), "r"), std::fclose);
        if (!f) return std::nullopt;
        std::unique_ptr<X509, void (*)(X509*)> cert(PEM_read_X509(f.get(), nullptr, nullptr, nullptr), X509_free);
        if (!cert) return std::nullopt;
        std::tm tm{};
        if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) return std::nullopt;
        return static_cast<std::int64_t>(timegm(&tm));
    }
    return std::nullopt;
}

void Evidence(PrometheusText& out, const std::string& dir) {
    struct stat st {};
    out.Family("sigil_evidence_present", "gauge", "1 when the evidence set's sha256sum.txt exists.");
    const bool present = stat((dir + "/sha256sum.txt").c_str(), &st) == 0;
    out.Sample("sigil_evidence_present", {}, std::uint64_t{present});
    if (!present) return;
    out.Family("sigil_evidence_age_seconds", "gauge", "Seconds since the evidence set (sha256sum.txt) was written.");
    out.Sample("sigil_evidence_age_seconds", {}, static_cast<double>(std::time(nullptr) - st.st_mtime));
    if (const auto expiry = CertificateExpiry(dir)) {
        out.Family("sigil_evidence_certificate_expiry_timestamp_seconds", "gauge",
                   "notAfter of the certificate the evidence set attests, as unix time.");
        out.Sample("sigil_evidence_certificate_expiry_timestamp_seconds", {}, static_cast<double>(*expiry));
    }
}

// keyd's own series from one STATS request per scrape (so a scrape shows keyd down even when no
// request needed it). Bounded by the worker's keyd client timeouts (connect 1 s, request 2 s): a
// dead keyd is refused at once and a hung one costs at most those, never a stalled scrape.
void Keyd(PrometheusText& out, KeydClient& keyd) {
    const std::int64_t started = common::MonotonicUs();
    auto stats = keyd.Stats();
    const double took = static_cast<double>(common::MonotonicUs() - started) / 1e6;
    // Answered at all (even a refusal of STATS by an older keyd) means up; unreachable means down.
    const bool up = stats.ok() || stats.error().code != "keyd_unavailable";
    out.Family("sigil_keyd_up", "gauge", "1 when keyd answered this scrape's request.");
    out.Sample("sigil_keyd_up", {}, std::uint64_t{up});
    out.Family("sigil_keyd_ping_seconds", "gauge", "How long keyd took to answer this scrape's request (STATS).");
    out.Sample("sigil_keyd_ping_seconds", {}, took);
    if (!stats.ok()) return;
    out.Family("sigil_keyd_uptime_seconds", "gauge", "Seconds since keyd started.");
    out.Sample("sigil_keyd_uptime_seconds", {}, static_cast<double>(stats->uptime_ms) / 1e3);
    out.Family("sigil_keyd_key_source", "gauge", "Where keyd's root key came from: 1 for its source (file or tee).");
    out.Sample("sigil_keyd_key_source", MetricLabels{{"source", stats->key_source == keyd::KeySourceKind::Tee ? "tee" : "file"}},
               std::uint64_t{1});
    out.Family("sigil_keyd_requests_total", "counter", "Requests keyd answered, by kind.");
    for (std::size_t k = 0; k < keyd::STATS_KINDS; ++k) {
        out.Sample("sigil_keyd_requests_total", MetricLabels{{"kind", keyd::StatsKindName(k)}}, stats->requests[k]);
    }
    out.Family("sigil_keyd_request_failures_total", "counter",
               "Requests keyd answered with a FAILURE (malformed, refused by policy, out of range, internal), by kind.");
    for (std::size_t k = 0; k < keyd::STATS_KINDS; ++k) {
        out.Sample("sigil_keyd_request_failures_total", MetricLabels{{"kind", keyd::StatsKindName(k)}}, stats->failures[k]);
    }
    common::SharedHistogram latency{};
    for (std::size_t i = 0; i < keyd::STATS_LATENCY_BUCKETS; ++i) latency.buckets[i].store(stats->latency_buckets[i]);
    latency.sum_us.store(stats->latency_sum_us);
    latency.count.store(stats->latency_count);
    out.Family("sigil_keyd_request_duration_seconds", "histogram", "Time keyd spent answering each request (inside keyd).");
    out.Histogram("sigil_keyd_request_duration_seconds", {}, latency);
    out.Family("sigil_keyd_connections", "gauge", "Connections open to keyd (one per worker that used it).");
    out.Sample("sigil_keyd_connections", {}, stats->connections_open);
    out.Family("sigil_keyd_connections_refused_total", "counter",
               "Connections keyd closed at once (peer uid not allowed, or --max-connections reached).");
    out.Sample("sigil_keyd_connections_refused_total", {}, stats->connections_refused);
}

// nginx's own refusals (nginx/sigil.conf.template): each is a 2-byte line in its tally file, so the
// count is the file's size / 2. A missing file (nginx not started yet) counts 0; a rotated one starts
// again from 0, which Prometheus reads as a counter reset.
void NginxRefusals(PrometheusText& out, const std::string& dir) {
    out.Family("sigil_nginx_refusals_total", "counter",
               "Requests nginx refused itself, never reaching a worker: limit=\"conn\" is the pool bound's 503 "
               "overloaded (limit_conn), limit=\"req\" the per-address rate limits' 429 (limit_req).");
    const std::pair<const char*, const char*> tallies[] = {{"conn", "/refused-limit-conn.tally"},
                                                            {"req", "/refused-limit-req.tally"}};
    for (const auto& [limit, file] : tallies) {
        struct stat st {};
        const std::uint64_t n = stat((dir + file).c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) / 2 : 0;
        out.Sample("sigil_nginx_refusals_total", MetricLabels{{"limit", limit}}, n);
    }
}

common::Result<HttpResponse> Scrape(const MetricsRouteInfo& info, const Router& router) {
    const common::SharedMetrics* m = common::BoundMetrics();
    if (m == nullptr) return common::MakeError(common::ErrorKind::NotFound, "not_found", "no such endpoint");
    PrometheusText out;
    out.Family("sigil_build_info", "gauge", "The running build: version and git commit.");
    out.Sample("sigil_build_info", MetricLabels{{"version", info.version}, {"commit", info.commit}}, std::uint64_t{1});
    Requests(out, *m, router);
    Runs(out, *m);
    Chain(out, *m, info.scoreboard);
    Dependencies(out, *m);
    Billing(out, *m);
    if (info.scoreboard != nullptr) Pool(out, *m, *info.scoreboard, info.max_workers);
    if (info.keyd != nullptr) Keyd(out, *info.keyd);
    if (!info.evidence_dir.empty()) Evidence(out, info.evidence_dir);
    if (!info.nginx_tally_dir.empty()) NginxRefusals(out, info.nginx_tally_dir);
    HttpResponse response;
    response.status = 200;
    response.body = out.text();
    response.SetHeader("Content-Type", PrometheusText::CONTENT_TYPE);
    return response;
}

}  // namespace

void AddMetricsRoute(Router& router, MetricsRouteInfo info) {
    // Routes past the shared table's rows are counted as "unmatched": say so once, at start.
    if (router.routes().size() + 1 >= common::METRICS_ROUTES) {
        common::LogWarn("metrics: " + std::to_string(router.routes().size()) + " routes, more than the " +
                        std::to_string(common::METRICS_ROUTES - 1) + " common/metrics.h has rows for; raise METRICS_ROUTES");
    }
    Route route{"GET", "/metrics", AuthRequirement::None, BodyKind::None,
                [info, &router](RequestContext&) { return Scrape(info, router); },
                "Prometheus metrics (operator listener only)", "system", "", ""};
    route.operator_only = true;
    router.Add(std::move(route));
}

}  // namespace sigil::workers
