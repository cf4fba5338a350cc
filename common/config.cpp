#include "common/config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace sigil::common {
namespace {

constexpr std::int64_t kMaxInt = 1LL << 40;  // keeps every Int far from overflow in callers

// Add a row here (and a line in sigil.conf.example) to add a key.
constexpr ConfigKey kSchema[] = {
    {"supervisor", "socket_path", ConfigType::Path, "/run/sigil/fcgi.sock", 0, 0,
     "FastCGI unix socket the supervisor listens on and nginx connects to"},
    {"supervisor", "socket_mode", ConfigType::Octal, "0666", 0, 0777,
     "permissions of the socket (nginx workers run as another user)"},
    {"supervisor", "socket_group", ConfigType::String, "", 0, 0,
     "if set, chown the socket to this group (then socket_mode 0660 suffices)"},
    {"supervisor", "workers", ConfigType::Int, "0", 0, 256,
     "worker processes; 0 = 2 x online CPUs, capped at 32"},
    {"supervisor", "max_workers", ConfigType::Int, "256", 1, 1024,
     "the pool grows to at most this many workers (>= workers; = workers keeps it static); nginx admits as many requests at once"},
    {"supervisor", "min_spare_workers", ConfigType::Int, "4", 0, 1024,
     "the pool forks workers whenever fewer than this many are idle (up to max_workers)"},
    {"supervisor", "max_spare_workers", ConfigType::Int, "16", 1, 1024,
     "idle workers beyond this many are stopped one per 100 ms (down to workers)"},
    {"supervisor", "reserve_workers", ConfigType::Int, "8", 0, 1024,
     "workers kept for chain-free requests: chain calls beyond max_workers - reserve_workers at once get 503 overloaded"},
    {"supervisor", "max_requests", ConfigType::Int, "100000", 1, kMaxInt,
     "a worker exits after serving this many requests and is replaced"},
    {"supervisor", "request_hard_timeout_s", ConfigType::Int, "60", 1, 86400,
     "the supervisor SIGKILLs a worker busy on one request longer than this"},
    {"supervisor", "graceful_stop_timeout_s", ConfigType::Int, "10", 1, 3600,
     "on stop or reload, QUIT -> TERM after this many seconds (then KILL 2 s later)"},
    {"supervisor", "scoreboard_name", ConfigType::Path, "sigil-scoreboard", 0, 0,
     "name of the shared-memory scoreboard (memfd, shown in /proc/<pid>/fd)"},
    {"supervisor", "worker_binary", ConfigType::String, "", 0, 0,
     "path of sigil-worker; empty = the sigil-worker next to sigil-supervisor"},
    {"supervisor", "zygotes", ConfigType::Int, "0", 0, 64,
     "sandbox zygotes the supervisor starts and all workers share (each forks run children for any worker); 0 = online CPUs"},
    {"worker", "max_body_bytes", ConfigType::Int, "1048576", 1, 1LL << 30,
     "largest request body a worker reads; larger bodies get a JSON 413"},
    {"worker", "dstack_socket", ConfigType::String, "", 0, 0,
     "dstack guest agent socket for /attestation and /info; empty = answer 503"},
    {"worker", "attestation_timeout_ms", ConfigType::Int, "5000", 100, 60000,
     "how long /attestation and /info wait for the guest agent before a 503"},
    {"worker", "attestation_cache_ms", ConfigType::Int, "60000", 0, 3600000,
     "how long a worker reuses the nonce-less quote and the info (0 = ask the agent every time)"},
    {"worker", "public_hosts", ConfigType::String, "localhost, *.localhost, localhost.localdomain, ip6-localhost, ip6-loopback", 0, 0,
     "comma-separated host names clients reach this service by (nginx server_name; *.name for a domain): an action's fetch to them is refused"},
    {"worker", "test_routes", ConfigType::Bool, "false", 0, 0,
     "add POST /core/v1/test/echo and GET /core/v1/test/sleep (integration tests only; never in production)"},
    {"chain", "rpc_url", ConfigType::String, "", 0, 0,
     "JSON-RPC URL of the Ethereum node holding AccountConfig; empty = no chain (account endpoints answer 503)"},
    {"chain", "contract_address", ConfigType::String, "", 0, 0, "address of the AccountConfig contract (0x + 40 hex)"},
    {"chain", "chain_id", ConfigType::Int, "0", 0, kMaxInt, "chain id of the node (required with rpc_url)"},
    {"chain", "rpc_timeout_ms", ConfigType::Int, "10000", 100, 600000,
     "time limit of one JSON-RPC attempt (request_timeout_ms bounds all of a request's calls together)"},
    {"chain", "request_timeout_ms", ConfigType::Int, "2000", 100, 600000,
     "how long one request (or one op of a run) may wait on the chain node in all; then 504 chain_timeout"},
    {"chain", "circuit_failures", ConfigType::Int, "3", 1, 1000,
     "consecutive failed chain calls (across the pool) that open the circuit: chain requests then fail at once"},
    {"chain", "circuit_open_ms", ConfigType::Int, "500", 10, 600000,
     "how long an open circuit refuses chain requests (503 chain_unavailable) before one probe tests the node"},
    {"chain", "cache_ttl_ms", ConfigType::Int, "2000", 0, 600000,
     "how long a contract read is cached (our writes and the contract's events also invalidate it)"},
    {"chain", "event_poll_ms", ConfigType::Int, "250", 50, 60000,
     "how often the pool polls the contract's events to drop stale cached reads; a key removed straight on "
     "the contract stops working within twice this"},
    {"chain", "receipt_timeout_ms", ConfigType::Int, "30000", 1000, 600000,
     "a relayed write whose receipt does not arrive in time fails with 504"},
    {"chain", "payers", ConfigType::Int, "64", 1, 1024,
     "API payer wallets (keyd's, registered in AccountConfig): one is leased per relayed write in flight; keyd's --payers must be at least this"},
    {"chain", "circuit_slow_ms", ConfigType::Int, "1000", 10, 600000,
     "a chain call that answers but takes longer than this counts as a failure for the circuit"},
    {"chain", "tx_replace_after_ms", ConfigType::Int, "6000", 100, 600000,
     "a relayed write with no receipt after this is re-sent with the same nonce and fees raised 25%"},
    {"chain", "instance_index", ConfigType::Int, "0", 0, 1023,
     "this instance's number (0..instance_count-1) among instances sharing one chain: it sends only from its own "
     "share of the payers, so no two instances share a nonce sequence"},
    {"chain", "instance_count", ConfigType::Int, "1", 1, 1024,
     "how many instances share the chain and its payers (each configured with the same payers and its own instance_index)"},
    {"actions", "timeout_ms", ConfigType::Int, "30000", 100, 600000,
     "wall-clock limit of one run (lowering included); the sandbox is killed 1 s after it"},
    {"actions", "memory_bytes", ConfigType::Int, "67108864", 4194304, 1LL << 30, "heap limit of one run"},
    {"actions", "max_code_bytes", ConfigType::Int, "16777216", 1, 16777216,
     "largest action source (inline code is also bounded by [worker] max_body_bytes)"},
    {"actions", "max_js_params_bytes", ConfigType::Int, "65536", 2, 1048576, "largest serialized js_params"},
    {"actions", "max_response_bytes", ConfigType::Int, "102400", 16, 1048576, "largest serialized response"},
    {"actions", "max_log_bytes", ConfigType::Int, "102400", 0, 1048576, "console output kept per run"},
    {"actions", "max_fetch_count", ConfigType::Int, "50", 0, 1000, "fetch calls per run"},
    {"actions", "max_key_requests", ConfigType::Int, "10", 0, 1000,
     "key operations per run (sign, encrypt, decrypt, key and action-key reads)"},
    {"actions", "fetch_timeout_ms", ConfigType::Int, "10000", 100, 600000, "time budget of one fetch"},
    {"actions", "fetch_max_response_bytes", ConfigType::Int, "1048576", 1, 16777216, "largest fetch response body"},
    {"actions", "fetch_allowed_addresses", ConfigType::String, "", 0, 0,
     "comma-separated IPs a fetch may reach although not public (default: public addresses only)"},
    {"actions", "ipfs_gateways", ConfigType::String, "https://ipfs.io/ipfs/", 0, 0,
     "comma-separated gateway URL prefixes tried in order for ipfs_id (the CID is appended)"},
    {"actions", "ipfs_timeout_ms", ConfigType::Int, "15000", 100, 600000, "time budget of one gateway fetch"},
    {"actions", "code_cache_entries", ConfigType::Int, "256", 0, 100000,
     "per worker: action sources and lowered code kept by CID"},
    {"actions", "code_cache_dir", ConfigType::String, "", 0, 0,
     "folder where code fetched by CID is kept for every worker and restart (checked again on read); empty = memory only"},
    {"actions", "sandbox_path", ConfigType::String, "", 0, 0,
     "the sigil-sandbox executable the supervisor starts as the shared zygotes (a worker started without the supervisor execs its own); empty = the one beside sigil-worker"},
    {"actions", "lowerer_socket", ConfigType::String, "", 0, 0,
     "unix socket of sigil-lowerer (Node.js), which lowers a CID's first run faster than the sandbox child; empty = the child lowers"},
    {"keyd", "socket_path", ConfigType::String, "", 0, 0,
     "sigil-keyd's unix socket; empty = no keyd (/health then omits it)"},
    {"keyd", "request_timeout_ms", ConfigType::Int, "2000", 50, 60000,
     "a keyd request that takes longer fails with keyd_unavailable (never hangs a worker)"},
    {"billing", "enabled", ConfigType::Bool, "false", 0, 0,
     "charge credits for relayed writes and runs (off: nothing is charged, /billing/* answers 503)"},
    {"billing", "database", ConfigType::String, "", 0, 0,
     "the ledger: a SQLite file path, or postgresql://... when several instances share one"},
    {"billing", "write_price_cents", ConfigType::Int, "1", 0, 1000000, "credits per successful relayed write"},
    {"billing", "run_second_price_cents", ConfigType::Int, "1", 0, 1000000, "credits per started second of a run"},
    {"billing", "starter_credit_cents", ConfigType::Int, "0", 0, 1000000000,
     "credits granted once to each new account (development: so the walkthrough works without paying)"},
    {"billing", "starter_credit_budget_cents", ConfigType::Int, "10000", 0, 1000000000000,
     "the most starter credit granted per UTC day across every instance sharing the ledger"},
    {"billing", "idempotency_keys_per_account", ConfigType::Int, "10000", 1, 10000000,
     "Idempotency-Key answers one account may hold at once (24 h each); more answer 429"},
    {"billing", "min_payment_cents", ConfigType::Int, "500", 1, 1000000000, "smallest create_payment_intent amount"},
    {"billing", "max_payment_cents", ConfigType::Int, "1000000", 1, 1000000000, "largest create_payment_intent amount"},
    {"billing", "max_concurrent_runs_per_key", ConfigType::Int, "8", 0, 100000,
     "runs one key may have in flight across the pool (0 = no cap); more answer 429"},
    {"billing", "processor", ConfigType::String, "chain", 0, 0, "payment processor: chain or stripe"},
    {"billing", "token_address", ConfigType::String, "", 0, 0, "chain processor: the ERC-20 (6 decimals) accepted"},
    {"billing", "payments_address", ConfigType::String, "", 0, 0, "chain processor: the payments contract (pay(reference, amount))"},
    {"billing", "confirmations", ConfigType::Int, "12", 1, 10000,
     "chain processor: blocks a Paid event needs, its own included (the development chain uses 1)"},
    {"billing", "payments_from_block", ConfigType::Int, "0", 0, kMaxInt,
     "chain processor: the first block confirm_payment searches (the payments contract's deployment)"},
    {"billing", "stripe_api_base", ConfigType::String, "https://api.stripe.com", 0, 0, "stripe processor: the API's base URL"},
    {"billing", "stripe_secret_key_file", ConfigType::String, "", 0, 0,
     "stripe processor: a file holding the secret key (never the key itself in this file)"},
    {"billing", "stripe_publishable_key", ConfigType::String, "", 0, 0, "stripe processor: answered by payments_config"},
    {"billing", "stripe_timeout_ms", ConfigType::Int, "10000", 100, 120000, "stripe processor: per request"},
    {"metrics", "enabled", ConfigType::Bool, "true", 0, 0,
     "count requests, runs and dependencies in shared memory for /metrics (nginx's operator listener only)"},
    {"metrics", "evidence_dir", ConfigType::String, "", 0, 0,
     "the evidence directory nginx serves at /evidences/; /metrics reports its age (\"\" = not reported)"},
    {"metrics", "nginx_tally_dir", ConfigType::String, "", 0, 0,
     "nginx's logs folder holding its refusal tallies (refused-limit-conn.tally, refused-limit-req.tally); "
     "/metrics counts nginx's own 503 and 429 from them (\"\" = not reported)"},
    {"history", "enabled", ConfigType::Bool, "true", 0, 0,
     "record every run (list_runs, get_run); written off the run's path, so a slow or dead database never holds up a run"},
    {"history", "database", ConfigType::String, "", 0, 0,
     "where the run history lives: a SQLite file or postgresql://...; empty = the ledger's ([billing] database)"},
    {"history", "keep_days", ConfigType::Int, "7", 1, 3650, "runs older than this are pruned in the background"},
    {"history", "keep_seconds", ConfigType::Int, "0", 0, kMaxInt, "when above 0, replaces keep_days (short retention, tests)"},
    {"history", "prune_interval_ms", ConfigType::Int, "60000", 100, 86400000,
     "how often one worker of the instance prunes old runs and idle guardrail buckets (bounded deletes, never on a request's path)"},
    {"history", "queue_records", ConfigType::Int, "1024", 1, 1000000,
     "runs a worker holds while the database is slow or down; more are dropped (logged and counted), never waited for"},
    {"history", "log_bytes", ConfigType::Int, "16384", 0, 1048576,
     "a run's logs kept, when its account turned logs on (set_run_history_settings)"},
    {"history", "flush_interval_ms", ConfigType::Int, "200", 10, 60000, "how often a worker writes its queued runs"},
};

std::string_view Trim(std::string_view s) {
    const char* ws = " \t\r";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsName(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
        if (!IsNameChar(c)) return false;
    }
    return true;
}

bool HasControl(std::string_view s) {
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7f) return true;
    }
    return false;
}

// Strict integer parse in `base`: optional '-' (decimal only), digits only, no overflow.
bool ParseInteger(std::string_view s, int base, std::int64_t& out) {
    bool neg = false;
    if (base == 10 && !s.empty() && s[0] == '-') {
        neg = true;
        s.remove_prefix(1);
    }
    if (s.empty() || s.size() > 18) return false;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '0' + base - 1) return false;
        v = v * base + (c - '0');
    }
    out = neg ? -v : v;
    return true;
}

bool ParseBool(std::string_view s, bool& out) {
    if (s == "true" || s == "yes" || s == "on" || s == "1") {
        out = true;
        return true;
    }
    if (s == "false" || s == "no" || s == "off" || s == "0") {
        out = false;
        return true;
    }
    return false;
}

std::string Name(const ConfigKey& k) { return std::string(k.section) + "." + std::string(k.key); }

// Checks `text` against the row's type; on success fills `number` for Int/Octal/Bool.
// Returns an empty string when valid, else the reason.
std::string CheckValue(const ConfigKey& k, std::string_view text, bool from_default, std::int64_t& number) {
    number = 0;
    switch (k.type) {
        case ConfigType::String:
            if (HasControl(text)) return "contains control characters";
            return {};
        case ConfigType::Path:
            if (text.empty() && !from_default) return "must not be empty";
            if (HasControl(text)) return "contains control characters";
            return {};
        case ConfigType::Int:
        case ConfigType::Octal: {
            const int base = k.type == ConfigType::Octal ? 8 : 10;
            if (!ParseInteger(text, base, number)) {
                return base == 8 ? "is not an octal number" : "is not a decimal integer";
            }
            if (number < k.min || number > k.max) {
                char buf[96];
                if (base == 8) {
                    std::snprintf(buf, sizeof buf, "is out of range 0%llo..0%llo",
                                  static_cast<unsigned long long>(k.min), static_cast<unsigned long long>(k.max));
                } else {
                    std::snprintf(buf, sizeof buf, "is out of range %lld..%lld", static_cast<long long>(k.min),
                                  static_cast<long long>(k.max));
                }
                return buf;
            }
            return {};
        }
        case ConfigType::Bool: {
            bool b = false;
            if (!ParseBool(text, b)) return "is not a boolean (true/false/yes/no/on/off/1/0)";
            number = b ? 1 : 0;
            return {};
        }
    }
    return "has an unknown type";
}

Error Invalid(std::string message) { return MakeError(ErrorKind::InvalidInput, "config_invalid", std::move(message)); }

}  // namespace

std::span<const ConfigKey> ConfigSchema() { return kSchema; }

Result<Config> Config::Parse(std::string_view text, std::span<const ConfigKey> schema) {
    Config cfg;
    cfg.m_schema = schema;
    std::set<std::string_view> sections;
    for (const auto& k : schema) {
        sections.insert(k.section);
        Value v;
        v.text = std::string(k.default_value);
        const std::string why = CheckValue(k, v.text, true, v.number);
        if (!why.empty()) return Invalid("default of " + Name(k) + " " + why);
        cfg.m_values[Name(k)] = std::move(v);
    }

    std::string section;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const auto raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        const std::string where = "line " + std::to_string(line_no) + ": ";
        const std::string_view line = Trim(raw);
        if (line.empty() || line[0] == '#') continue;
        if (line.front() == '[') {
            if (line.back() != ']') return Invalid(where + "malformed section header");
            const std::string_view name = Trim(line.substr(1, line.size() - 2));
            if (!IsName(name)) return Invalid(where + "malformed section name");
            if (sections.count(name) == 0) return Invalid(where + "unknown section [" + std::string(name) + "]");
            section = std::string(name);
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) return Invalid(where + "expected 'key = value' or '[section]'");
        const std::string_view key = Trim(line.substr(0, eq));
        const std::string_view value = Trim(line.substr(eq + 1));
        if (!IsName(key)) return Invalid(where + "malformed key name");
        if (section.empty()) return Invalid(where + "key " + std::string(key) + " appears before any [section]");
        const std::string full = section + "." + std::string(key);
        const ConfigKey* row = nullptr;
        for (const auto& k : schema) {
            if (k.section == section && k.key == key) row = &k;
        }
        if (row == nullptr) return Invalid(where + "unknown key " + full);
        Value& v = cfg.m_values[full];
        if (v.set) return Invalid(where + "duplicate key " + full);
        std::int64_t number = 0;
        const std::string why = CheckValue(*row, value, false, number);
        if (!why.empty()) return Invalid(where + full + " " + why + " (" + std::string(row->doc) + ")");
        v.text = std::string(value);
        v.number = number;
        v.set = true;
    }
    return cfg;
}

Result<std::string> Config::ReadText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return MakeError(ErrorKind::InvalidInput, "config_unreadable",
                         "cannot open config file " + path + ": " + std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        return MakeError(ErrorKind::InvalidInput, "config_unreadable", "cannot read config file " + path);
    }
    return ss.str();
}

Result<Config> Config::LoadFile(const std::string& path, std::span<const ConfigKey> schema) {
    auto text = ReadText(path);
    if (!text.ok()) return text.error();
    auto cfg = Parse(*text, schema);
    if (!cfg.ok()) {
        return MakeError(ErrorKind::InvalidInput, "config_invalid", path + ": " + cfg.error().message);
    }
    return cfg;
}

Config Config::Defaults(std::span<const ConfigKey> schema) {
    auto cfg = Parse("", schema);
    if (!cfg.ok()) {
        std::fprintf(stderr, "config schema: %s\n", cfg.error().message.c_str());
        std::abort();
    }
    return std::move(cfg).value();
}

const Config::Value& Config::Find(std::string_view section, std::string_view key, ConfigType want_a,
                                  ConfigType want_b) const {
    for (const auto& k : m_schema) {
        if (k.section == section && k.key == key) {
            if (k.type != want_a && k.type != want_b) break;
            return m_values.find(Name(k))->second;
        }
    }
    // A key missing from the schema (or read with the wrong type) is a bug in the caller.
    std::fprintf(stderr, "config: no %.*s.%.*s of the requested type in the schema\n", static_cast<int>(section.size()),
                 section.data(), static_cast<int>(key.size()), key.data());
    std::abort();
}

std::string Config::GetString(std::string_view section, std::string_view key) const {
    return Find(section, key, ConfigType::String, ConfigType::Path).text;
}

std::int64_t Config::GetInt(std::string_view section, std::string_view key) const {
    return Find(section, key, ConfigType::Int, ConfigType::Octal).number;
}

bool Config::GetBool(std::string_view section, std::string_view key) const {
    return Find(section, key, ConfigType::Bool, ConfigType::Bool).number != 0;
}

bool Config::IsSet(std::string_view section, std::string_view key) const {
    const auto it = m_values.find(std::string(section) + "." + std::string(key));
    return it != m_values.end() && it->second.set;
}

}  // namespace sigil::common
