// Validation of request input (JSON bodies and query parameters) into typed values, each refusal a
// 400 naming the field. Handlers never touch raw RapidJSON values for their checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "common/bytes.h"
#include "common/result.h"
#include "workers/chain/account_config.h"
#include "workers/http/http.h"

namespace sigil::workers {

inline constexpr std::size_t MAX_NAME_BYTES = 256;          // as the contract enforces
inline constexpr std::size_t MAX_DESCRIPTION_BYTES = 4096;  // as the contract enforces
inline constexpr std::size_t MAX_LIST_ITEMS = 100;          // ids, PKPs or CIDs in one request
inline constexpr std::size_t MAX_PAGE_SIZE = 100;
inline constexpr std::size_t DEFAULT_PAGE_SIZE = 10;

// Reads fields of one JSON object body. Every getter returns InvalidInput "invalid_<field>"
// (or "missing_<field>" for a required field that is absent or null) with a message naming it.
class JsonBody {
public:
    // Errors: InvalidInput "invalid_body" when the body is absent or not a JSON object.
    static common::Result<JsonBody> From(const rapidjson::Document* doc);

    bool Has(const char* field) const;
    // A string of at most `max_bytes` UTF-8 bytes. Absent and optional -> `fallback`.
    common::Result<std::string> String(const char* field, std::size_t max_bytes, bool required = true,
                                       std::string fallback = "") const;
    common::Result<bool> Bool(const char* field, bool required = true, bool fallback = false) const;
    // A group id: a JSON number or a decimal string, 1..2^63 (0 is the wildcard, never a group).
    common::Result<std::uint64_t> GroupId(const char* field) const;
    // An array of group ids for a permission field: numbers or decimal strings, 0 allowed (wildcard),
    // at most MAX_LIST_ITEMS. Absent and optional -> empty.
    common::Result<std::vector<std::uint64_t>> GroupIdList(const char* field, bool required = false) const;
    // 0x + 40 hex (any case; mixed case must be a valid EIP-55 checksum).
    common::Result<common::Address20> Address(const char* field) const;
    common::Result<std::vector<common::Address20>> AddressList(const char* field, bool required = false) const;
    // A hashed CID: 0x + 64 hex.
    common::Result<common::Hash32> HashedCid(const char* field) const;
    // In a list, the 0x is optional (the deployed implementation takes a group's hashes either way).
    common::Result<std::vector<common::Hash32>> HashedCidList(const char* field, bool required = false) const;
    // Whether the array `field` holds an all-zero entry: 0, "0", "0x0", the zero address, 0x + 64
    // zeros. The deployed implementation reads one in a group's PKP or CID list as "every PKP" or
    // "every action" (its group wildcards); no real PKP or CID hash is zero.
    bool HasZeroEntry(const char* field) const;
    // A raw IPFS CID (CIDv0 "Qm..." or CIDv1 base32), returned with its keccak256 hash.
    common::Result<std::pair<std::string, common::Hash32>> RawCid(const char* field) const;
    // An unsigned integer (number or decimal string), e.g. expiration seconds.
    common::Result<std::uint64_t> U64(const char* field, bool required = false, std::uint64_t fallback = 0) const;

private:
    explicit JsonBody(const rapidjson::Value* v) : m_obj(v) {}
    const rapidjson::Value* Field(const char* field) const;
    const rapidjson::Value* m_obj;
};

// page_number (0-based, default 0) and page_size (1..100, default 10) from the query string.
// Errors: InvalidInput "invalid_page_number" / "invalid_page_size".
common::Result<Page> ParsePage(const HttpRequest& request);
// group_id from the query string: nullopt when absent and not required. Errors: InvalidInput
// "missing_group_id" / "invalid_group_id".
common::Result<std::optional<std::uint64_t>> QueryGroupId(const HttpRequest& request, bool required);

}  // namespace sigil::workers
