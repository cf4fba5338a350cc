// An action's code by CID: the worker's in-memory cache, the shared folder cache, and the IPFS
// gateways. Every byte from a gateway or the shared folder is accepted only when it hashes to the
// CID, so neither needs more trust than the CID itself.
#pragma once

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

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

// The code of `cid` from `cache`, else the shared folder (settings.code_cache_dir), else the
// gateways in order; what is found is added to `cache` (and a gateway's answer to the folder).
// Errors: Unavailable "ipfs_unavailable" (no gateway configured, or each failed) or
// "ipfs_cid_mismatch" (a gateway sent other bytes); the message names gateways by position only.
common::Result<CodeCache::Entry> LoadCode(const ActionSettings& settings, CodeCache& cache, const std::string& cid);

}  // namespace sigil::workers
