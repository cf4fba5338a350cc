#include "workers/actions/code_source.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

#include <unistd.h>

#include "common/activity.h"
#include "common/cid.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/metrics.h"
#include "workers/actions/fetch.h"
#include "workers/sandbox/protocol/runtime_level.h"

namespace sigil::workers {

using common::ErrorKind;
using common::MakeError;
using common::Result;

const CodeCache::Entry* CodeCache::Find(const std::string& cid) {
    auto it = m_map.find(cid);
    if (it == m_map.end()) return nullptr;
    m_lru.splice(m_lru.begin(), m_lru, it->second);
    return &it->second->second;
}

void CodeCache::Put(const std::string& cid, Entry entry) {
    if (m_max_entries == 0 || entry.code.size() > m_max_bytes) return;
    if (auto it = m_map.find(cid); it != m_map.end()) {
        m_bytes -= it->second->second.code.size();
        m_lru.erase(it->second);
        m_map.erase(it);
    }
    m_bytes += entry.code.size();
    m_lru.emplace_front(cid, std::move(entry));
    m_map[cid] = m_lru.begin();
    while (m_map.size() > m_max_entries || m_bytes > m_max_bytes) {
        m_bytes -= m_lru.back().second.code.size();
        m_map.erase(m_lru.back().first);
        m_lru.pop_back();
    }
}

namespace {

// The shared folder cache: files named by CID, written atomically, verified on every read (a
// damaged or planted file is ignored), so it needs no more trust than a gateway.
// A file of the folder, nullopt when it is missing or longer than `max_bytes`.
std::optional<std::string> ReadCapped(const std::string& path, std::size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string data;
    data.resize(max_bytes + 1);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<std::size_t>(in.gcount()));
    if (data.size() > max_bytes) return std::nullopt;
    return data;
}

std::optional<std::string> ReadCachedSource(const std::string& dir, const std::string& cid, std::size_t max_bytes) {
    if (dir.empty()) return std::nullopt;
    auto data = ReadCapped(dir + "/" + cid, max_bytes);
    if (!data || common::ComputeCidV0(*data) != cid) return std::nullopt;
    return data;
}

void WriteCachedSource(const std::string& dir, const std::string& cid, const std::string& data) {
    if (dir.empty()) return;
    const std::string tmp = dir + "/." + cid + "." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out) {
            std::remove(tmp.c_str());
            common::LogWarn("code cache: cannot write " + tmp);
            return;
        }
    }
    if (std::rename(tmp.c_str(), (dir + "/" + cid).c_str()) != 0) std::remove(tmp.c_str());
}

// A gateway fetch's failure for the caller: the kind, never the message (it names the gateway).
std::string GatewayFailure(const common::Error& error) {
    if (error.code == "fetch_timeout") return "timed out";
    if (error.code == "fetch_address_refused") return "redirected to an address that is not allowed";
    if (error.code == "fetch_response_too_large") return "the code is larger than the code limit";
    return "unreachable";
}

}  // namespace

Result<CodeCache::Entry> LoadCode(const ActionSettings& settings, CodeCache& cache, const std::string& cid,
                                  std::uint64_t budget_ms, GatewayMiss* miss) {
    if (miss != nullptr) *miss = GatewayMiss::Broken;
    if (const auto* hit = cache.Find(cid)) return *hit;
    if (auto cached = ReadCachedSource(settings.code_cache_dir, cid, settings.max_code_bytes)) {
        CodeCache::Entry entry{std::move(*cached), false};
        cache.Put(cid, entry);
        return entry;
    }
    if (settings.ipfs_gateways.empty()) {
        return MakeError(ErrorKind::Unavailable, "ipfs_unavailable", "no IPFS gateway is configured");
    }
    // The caller learns which gateway failed and how, in our words; the details (URLs, hosts,
    // addresses of the operator's gateways) go to the log only.
    const common::ActivityScope activity(common::Activity::Gateway);
    std::string failures;
    bool mismatch = false;
    bool missing = false;  // a gateway was reached and did not have the CID in time
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(std::min<std::uint64_t>(budget_ms, 24ull * 3600 * 1000));
    for (std::size_t i = 0; i < settings.ipfs_gateways.size(); ++i) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            failures += (failures.empty() ? "" : "; ") + std::string("gateway ") + std::to_string(i + 1) +
                        ": not asked, the run's time limit passed";
            continue;
        }
        const std::string& gateway = settings.ipfs_gateways[i];
        const std::string label = "gateway " + std::to_string(i + 1) + ": ";
        FetchLimits limits;
        limits.trusted_first_hop = true;  // the operator's own gateway (the dev one is local); redirects are not
        limits.allowed_addresses = settings.fetch_allowed_addresses;
        limits.refused_hosts = settings.public_hosts;
        limits.timeout_ms = static_cast<int>(std::min<std::int64_t>(settings.ipfs_timeout_ms, left.count()));
        limits.max_response_bytes = settings.max_code_bytes;
        FetchRequest request;
        request.url = gateway + cid;
        common::DependencyTimer timer(common::Dependency::Gateway);
        auto response = workers::Fetch(request, limits);
        if (response.ok() && response->status == 200) timer.MarkOk();
        std::string failure;
        if (!response.ok()) {
            common::LogWarn("gateway " + gateway + " failed for " + cid + ": " + response.error().message);
            failure = GatewayFailure(response.error());
            if (response.error().code == "fetch_timeout") missing = true;
        } else if (response->status != 200) {
            failure = "HTTP " + std::to_string(response->status);
            if (response->status == 404 || response->status == 410 || response->status == 504) missing = true;
        } else if (common::ComputeCidV0(response->body) != cid) {
            mismatch = true;
            failure = "the bytes do not hash to " + cid;
            common::LogWarn("gateway " + gateway + " sent bytes that do not match " + cid);
        } else {
            WriteCachedSource(settings.code_cache_dir, cid, response->body);
            CodeCache::Entry entry{std::move(response->body), false};
            cache.Put(cid, entry);
            return entry;
        }
        failures += (failures.empty() ? "" : "; ") + label + failure;
    }
    if (miss != nullptr && missing && !mismatch) *miss = GatewayMiss::Missing;
    return MakeError(ErrorKind::Unavailable, mismatch ? "ipfs_cid_mismatch" : "ipfs_unavailable",
                     "could not fetch " + cid + " from any gateway (" + failures + ")");
}


namespace {

constexpr std::string_view LOWERED_MAGIC = "sigil-lowered 1 ";

std::string LoweredMac(const std::string& cid, const std::string& lowered, common::ByteView key) {
    const std::string covered = cid + "\n" + std::string(SANDBOX_LOWERING) + " lower.js " +
                                std::string(SANDBOX_LOWER_JS_DIGEST) + "\n" + lowered;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(covered.data()),
             covered.size(), mac, &mac_len) == nullptr) {
        return {};
    }
    return common::HexEncode(common::ByteView(mac, mac_len));
}

}  // namespace

std::optional<std::string> ReadLoweredCode(const ActionSettings& settings, const std::string& cid, common::ByteView key) {
    if (settings.code_cache_dir.empty() || key.empty()) return std::nullopt;
    // Lowered text is larger than its source, but not without bound.
    auto file = ReadCapped(settings.code_cache_dir + "/" + cid + ".lowered", 4 * settings.max_code_bytes + 4096);
    if (!file) return std::nullopt;
    const std::string& data = *file;
    const std::size_t header_end = data.find('\n');
    if (header_end == std::string::npos || data.compare(0, LOWERED_MAGIC.size(), LOWERED_MAGIC) != 0) return std::nullopt;
    const std::string mac = data.substr(LOWERED_MAGIC.size(), header_end - LOWERED_MAGIC.size());
    std::string lowered = data.substr(header_end + 1);
    const std::string expected = LoweredMac(cid, lowered, key);
    if (expected.empty() || !common::ConstantTimeEqual(common::AsBytes(mac), common::AsBytes(expected))) {
        common::LogWarn("code cache: " + cid + ".lowered fails its check; ignored");
        return std::nullopt;
    }
    return lowered;
}

void WriteLoweredCode(const ActionSettings& settings, const std::string& cid, const std::string& lowered,
                      common::ByteView key) {
    if (settings.code_cache_dir.empty() || key.empty()) return;
    const std::string mac = LoweredMac(cid, lowered, key);
    if (mac.empty()) return;
    WriteCachedSource(settings.code_cache_dir, cid + ".lowered", std::string(LOWERED_MAGIC) + mac + "\n" + lowered);
}

}  // namespace sigil::workers
