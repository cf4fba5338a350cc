// IPFS content identifiers: the CIDv0 that `ipfs add --cid-version=0` gives a byte string, and CID parsing.
//
// Layout computed (kubo's defaults for CIDv0, matched against ipfs-only-hash; see
// tests/data/cid_vectors.txt): fixed-size chunks of 262144 bytes; every chunk becomes a dag-pb
// leaf holding UnixFS{Type=File, Data=chunk, filesize}; a single chunk is the root itself;
// more chunks are joined by a balanced tree (all leaves at one depth, at most 174 links per
// node, filled left to right) of dag-pb nodes holding UnixFS{Type=File, filesize, blocksizes}.
// Raw leaves are off. The CID is base58btc(0x12 0x20 || sha256(root node bytes)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::common {

constexpr std::size_t CIDV0_CHUNK_SIZE = 262144;
constexpr std::size_t CIDV0_MAX_LINKS = 174;
constexpr std::size_t CIDV0_STRING_LENGTH = 46;  // "Qm" + 44 base58 characters

// Chunking parameters. Only the defaults give kubo's CIDs; other values exist so tests can
// reach deep trees with small inputs (cross-checked with ipfs-only-hash's same options).
struct CidV0Layout {
    std::size_t chunk_size = CIDV0_CHUNK_SIZE;  // must be >= 1
    std::size_t max_links = CIDV0_MAX_LINKS;    // must be >= 2
};

// Incremental CIDv0 computation: Update any number of times, then Final once.
// Memory stays bounded whatever the input size: one chunk buffer plus, per tree level, at
// most max_links child entries (digest and two sizes). After Final the object must not be
// used again (Update/Final abort, as Sha256 does). A layout outside the limits above aborts:
// it is a programming error, never input.
class CidV0Builder {
public:
    explicit CidV0Builder(CidV0Layout layout = {});

    void Update(ByteView data);

    // The "Qm..." string of everything passed to Update (empty input included).
    std::string Final();

    // Same as Final, but the 32-byte SHA-256 digest of the root node instead of its string.
    Hash32 FinalDigest();

private:
    struct Child {
        Hash32 digest;
        std::uint64_t tsize;     // serialized bytes of the child and everything below it
        std::uint64_t filesize;  // file bytes under the child
    };

    void EmitLeaf(ByteView chunk);
    void Push(std::size_t level, const Child& child);
    Child MakeParent(const std::vector<Child>& children) const;

    CidV0Layout m_layout;
    Bytes m_chunk;                             // the unfinished chunk, < chunk_size bytes
    std::vector<std::vector<Child>> m_levels;  // m_levels[0] holds leaves, above: parents
    bool m_finished = false;
};

// CIDv0 string of `data` (a one-shot CidV0Builder with kubo's layout). Never fails.
std::string ComputeCidV0(ByteView data);
inline std::string ComputeCidV0(std::string_view s) { return ComputeCidV0(AsBytes(s)); }

// The CIDv0 string of a dag-pb node whose SHA-256 digest is `digest`.
std::string CidV0FromDigest(const Hash32& digest);

// Parse a CIDv0 string: exactly "Qm" + 44 base58btc characters decoding to the multihash
// 0x12 (sha2-256) 0x20 (32 bytes) || digest. No whitespace, no multibase prefix.
// Returns the 32-byte digest.
// Errors: InvalidInput "invalid_cid" (wrong length or prefix, character outside the
// alphabet, multihash other than sha2-256/32).
Result<Hash32> ParseCidV0(std::string_view text);

// Syntactic check of a CID string, for places that store CIDs without fetching them.
// Accepts: any string ParseCidV0 accepts; and CIDv1 in multibase base32 ("b" + lowercase
// RFC 4648 alphabet, no padding, unused trailing bits zero) whose bytes are
// varint(1) || varint(codec) || varint(hash code) || varint(digest length) || digest with the
// digest length matching exactly. Codecs and hash functions are not restricted; varints must
// be minimal and fit 63 bits; at most 256 characters. Everything else (CIDv1 in other bases,
// uppercase base32, CIDv0 bytes in base32) is refused.
bool IsValidCid(std::string_view text);

// keccak256(utf8(cid)): how the contract and the API name an action ("hashed CID").
Hash32 CidHash(std::string_view cid);

}  // namespace sigil::common
