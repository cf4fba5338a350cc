// An action's code by CID: the worker's in-memory cache, the shared folder cache, and the IPFS
// gateways. Every byte from a gateway or the shared folder is accepted only when it hashes to the
// CID, so neither needs more trust than the CID itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/actions/settings.h"

namespace sigil::workers {

// Action code by CID, least recently used first out. An entry holds either the source or, once
// a run lowered it, the lowered text (all a later run needs).
class CodeCache {
public:
    struct Entry {
        std::string code;
        bool lowered = false;
    };
    explicit CodeCache(std::size_t max_entries, std::size_t max_bytes = 128u << 20)
        : m_max_entries(max_entries), m_max_bytes(max_bytes) {}
    const Entry* Find(const std::string& cid);  // marks it recently used
    void Put(const std::string& cid, Entry entry);
    std::size_t size() const { return m_map.size(); }

private:
    using List = std::list<std::pair<std::string, Entry>>;
    std::size_t m_max_entries;
    std::size_t m_max_bytes;
    std::size_t m_bytes = 0;
    List m_lru;  // front = most recent
    std::unordered_map<std::string, List::iterator> m_map;
};

// Whose a failed LoadCode was (DESIGN.md section 9, billing): Missing when some gateway was
// reached and did not have the CID in time (HTTP 404, 410 or 504, or it timed out): the caller
// chose that wait by naming the CID, so it is run time. Broken when every gateway failed on its
// own (unreachable, another status, a refused redirect, bytes that do not match): the service's.
enum class GatewayMiss { Missing, Broken };

// The code of `cid` from `cache`, else the shared folder (settings.code_cache_dir), else the
// gateways in order, all of them within `budget_ms` (the run's time limit); what is found is added
// to `cache` (and a gateway's answer to the folder). `miss`, when given, says whose a failure was.
// Errors: Unavailable "ipfs_unavailable" (no gateway configured, or each failed) or
// "ipfs_cid_mismatch" (a gateway sent other bytes); the message names gateways by position only.
common::Result<CodeCache::Entry> LoadCode(const ActionSettings& settings, CodeCache& cache, const std::string& cid,
                                          std::uint64_t budget_ms = UINT64_MAX, GatewayMiss* miss = nullptr);

// Lowered code in the shared folder, so a CID is lowered once for the whole pool (and across
// worker restarts) rather than once per worker. Lowered text cannot be checked against its CID,
// so the file "<cid>.lowered" carries an HMAC-SHA256, under `key` (the pool's secret,
// Scoreboard::CacheKey), of the CID, the lowering tool (SANDBOX_LOWERING and the digest of our
// lower.js: another version's output is never taken) and the text; a file that fails the check, or any file when `key` is empty, is
// ignored. Nothing happens without settings.code_cache_dir.
std::optional<std::string> ReadLoweredCode(const ActionSettings& settings, const std::string& cid, common::ByteView key);
void WriteLoweredCode(const ActionSettings& settings, const std::string& cid, const std::string& lowered,
                      common::ByteView key);

}  // namespace sigil::workers
