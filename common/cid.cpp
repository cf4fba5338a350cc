#include "common/cid.h"

#include <cstdio>
#include <cstdlib>

#include "common/base58.h"
#include "common/keccak.h"
#include "common/sha256.h"

namespace sigil::common {
namespace {

// Protobuf keys (field number << 3 | wire type) of the dag-pb and UnixFS messages.
constexpr std::uint8_t PB_NODE_DATA = 0x0a;       // PBNode.Data = 1, bytes
constexpr std::uint8_t PB_NODE_LINKS = 0x12;      // PBNode.Links = 2, message (repeated)
constexpr std::uint8_t PB_LINK_HASH = 0x0a;       // PBLink.Hash = 1, bytes
constexpr std::uint8_t PB_LINK_NAME = 0x12;       // PBLink.Name = 2, string
constexpr std::uint8_t PB_LINK_TSIZE = 0x18;      // PBLink.Tsize = 3, varint
constexpr std::uint8_t UNIXFS_TYPE = 0x08;        // Data.Type = 1, varint
constexpr std::uint8_t UNIXFS_DATA = 0x12;        // Data.Data = 2, bytes
constexpr std::uint8_t UNIXFS_FILESIZE = 0x18;    // Data.filesize = 3, varint
constexpr std::uint8_t UNIXFS_BLOCKSIZES = 0x20;  // Data.blocksizes = 4, varint (repeated, not packed)
constexpr std::uint8_t UNIXFS_TYPE_FILE = 2;

constexpr std::uint8_t MULTIHASH_SHA2_256 = 0x12;
constexpr std::uint8_t MULTIHASH_LEN_32 = 0x20;

[[noreturn]] void Fatal(const char* what) {
    std::fprintf(stderr, "sigil: CIDv0 builder: %s\n", what);
    std::abort();
}

std::size_t VarintSize(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

void AppendVarint(Bytes& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

Error BadCid(std::string message) { return MakeError(ErrorKind::InvalidInput, "invalid_cid", std::move(message)); }

}  // namespace

CidV0Builder::CidV0Builder(CidV0Layout layout) : m_layout(layout) {
    if (m_layout.chunk_size < 1 || m_layout.max_links < 2) Fatal("invalid layout");
    m_chunk.reserve(m_layout.chunk_size);
}

void CidV0Builder::Update(ByteView data) {
    if (m_finished) Fatal("update after final");
    while (!data.empty()) {
        if (m_chunk.empty() && data.size() >= m_layout.chunk_size) {
            // Whole chunks straight from the caller's buffer: no copy.
            EmitLeaf(data.first(m_layout.chunk_size));
            data = data.subspan(m_layout.chunk_size);
            continue;
        }
        const std::size_t take = std::min(m_layout.chunk_size - m_chunk.size(), data.size());
        m_chunk.insert(m_chunk.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
        data = data.subspan(take);
        if (m_chunk.size() == m_layout.chunk_size) {
            EmitLeaf(m_chunk);
            m_chunk.clear();
        }
    }
}

// Leaf: PBNode{Data: UnixFS{Type: File, Data: chunk (omitted when empty), filesize}}, no links.
// The chunk is hashed in place between a serialized header and trailer.
void CidV0Builder::EmitLeaf(ByteView chunk) {
    const std::uint64_t n = chunk.size();
    const std::uint64_t unixfs_size =
        2 + (n > 0 ? 1 + VarintSize(n) + n : 0) + 1 + VarintSize(n);

    Bytes header;
    header.push_back(PB_NODE_DATA);
    AppendVarint(header, unixfs_size);
    header.push_back(UNIXFS_TYPE);
    header.push_back(UNIXFS_TYPE_FILE);
    if (n > 0) {
        header.push_back(UNIXFS_DATA);
        AppendVarint(header, n);
    }
    Bytes trailer;
    trailer.push_back(UNIXFS_FILESIZE);
    AppendVarint(trailer, n);

    Sha256 hasher;
    hasher.Update(header);
    hasher.Update(chunk);
    hasher.Update(trailer);
    Push(0, Child{hasher.Final(), header.size() + n + trailer.size(), n});
}

// A full level is only closed when another sibling arrives, so Final still sees it whole and
// can tell "exactly max_links children" (root one level up) from "more to come".
void CidV0Builder::Push(std::size_t level, const Child& child) {
    if (level == m_levels.size()) m_levels.emplace_back();
    if (m_levels[level].size() == m_layout.max_links) {
        const Child parent = MakeParent(m_levels[level]);
        m_levels[level].clear();
        Push(level + 1, parent);
    }
    m_levels[level].push_back(child);
}

// Parent: PBNode{Links: [PBLink{Hash, Name: "", Tsize}...], Data: UnixFS{Type: File, filesize,
// blocksizes...}}. dag-pb's canonical form writes the links (field 2) before the data (field 1).
CidV0Builder::Child CidV0Builder::MakeParent(const std::vector<Child>& children) const {
    Bytes node;
    std::uint64_t tsize_below = 0, filesize = 0;
    for (const Child& c : children) {
        const std::uint64_t link_size = 2 + 2 + c.digest.size() + 2 + 1 + VarintSize(c.tsize);
        node.push_back(PB_NODE_LINKS);
        AppendVarint(node, link_size);
        node.push_back(PB_LINK_HASH);
        node.push_back(2 + c.digest.size());
        node.push_back(MULTIHASH_SHA2_256);
        node.push_back(MULTIHASH_LEN_32);
        node.insert(node.end(), c.digest.begin(), c.digest.end());
        node.push_back(PB_LINK_NAME);
        node.push_back(0);
        node.push_back(PB_LINK_TSIZE);
        AppendVarint(node, c.tsize);
        tsize_below += c.tsize;
        filesize += c.filesize;
    }
    Bytes unixfs{UNIXFS_TYPE, UNIXFS_TYPE_FILE, UNIXFS_FILESIZE};
    AppendVarint(unixfs, filesize);
    for (const Child& c : children) {
        unixfs.push_back(UNIXFS_BLOCKSIZES);
        AppendVarint(unixfs, c.filesize);
    }
    node.push_back(PB_NODE_DATA);
    AppendVarint(node, unixfs.size());
    node.insert(node.end(), unixfs.begin(), unixfs.end());
    return Child{Sha256Hash(node), node.size() + tsize_below, filesize};
}

Hash32 CidV0Builder::FinalDigest() {
    if (m_finished) Fatal("second final");
    m_finished = true;
    // The last partial chunk; an empty input is one empty leaf.
    if (!m_chunk.empty() || m_levels.empty()) EmitLeaf(m_chunk);
    m_chunk.clear();
    // Close every level bottom-up. A level below the top wraps even a single child, which
    // keeps all leaves at the same depth, as kubo's balanced builder does.
    for (std::size_t level = 0;; ++level) {
        auto& children = m_levels[level];
        const bool top = level + 1 == m_levels.size();
        if (top && children.size() == 1) return children.front().digest;
        if (children.empty()) continue;
        const Child parent = MakeParent(children);
        children.clear();
        Push(level + 1, parent);
    }
}

std::string CidV0Builder::Final() { return CidV0FromDigest(FinalDigest()); }

std::string ComputeCidV0(ByteView data) {
    CidV0Builder builder;
    builder.Update(data);
    return builder.Final();
}

std::string CidV0FromDigest(const Hash32& digest) {
    Bytes multihash{MULTIHASH_SHA2_256, MULTIHASH_LEN_32};
    multihash.insert(multihash.end(), digest.begin(), digest.end());
    return Base58Encode(multihash);
}

Result<Hash32> ParseCidV0(std::string_view text) {
    if (text.size() != CIDV0_STRING_LENGTH) return BadCid("a CIDv0 is 46 characters long");
    if (text.substr(0, 2) != "Qm") return BadCid("a CIDv0 starts with Qm");
    auto decoded = Base58Decode(text, 2 + 32);
    if (!decoded) return BadCid("a CIDv0 is base58btc (Bitcoin alphabet)");
    const Bytes& mh = *decoded;
    if (mh.size() != 2 + 32 || mh[0] != MULTIHASH_SHA2_256 || mh[1] != MULTIHASH_LEN_32) {
        return BadCid("a CIDv0 must hold a 32-byte sha2-256 multihash");
    }
    Hash32 digest{};
    std::copy(mh.begin() + 2, mh.end(), digest.begin());
    return digest;
}

namespace {

constexpr std::size_t CID_MAX_TEXT = 256;

// Minimal unsigned varint (multiformats rule), at most 9 bytes, advancing `pos`.
bool ReadVarint(const Bytes& in, std::size_t& pos, std::uint64_t& value) {
    value = 0;
    for (std::size_t i = 0; i < 9; ++i) {
        if (pos >= in.size()) return false;
        const std::uint8_t b = in[pos++];
        value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) return !(b == 0 && i > 0);  // a trailing zero byte is non-minimal
    }
    return false;
}

// RFC 4648 base32, lowercase, no padding; unused trailing bits must be zero.
bool Base32LowerDecode(std::string_view text, Bytes& out) {
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        int v;
        if (c >= 'a' && c <= 'z') v = c - 'a';
        else if (c >= '2' && c <= '7') v = c - '2' + 26;
        else return false;
        acc = (acc << 5) | static_cast<std::uint32_t>(v);
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<std::uint8_t>(acc >> bits));
            acc &= (1u << bits) - 1;
        }
    }
    // Leftover bits from a valid encoding are fewer than 5 and all zero.
    return bits < 5 && acc == 0;
}

bool IsValidCidV1Base32(std::string_view text) {
    if (text.size() < 2 || text.size() > CID_MAX_TEXT || text[0] != 'b') return false;
    Bytes bytes;
    if (!Base32LowerDecode(text.substr(1), bytes)) return false;
    std::size_t pos = 0;
    std::uint64_t version = 0, codec = 0, hash_code = 0, digest_len = 0;
    if (!ReadVarint(bytes, pos, version) || version != 1) return false;
    if (!ReadVarint(bytes, pos, codec)) return false;
    if (!ReadVarint(bytes, pos, hash_code)) return false;
    if (!ReadVarint(bytes, pos, digest_len)) return false;
    return digest_len == bytes.size() - pos;
}

}  // namespace

bool IsValidCid(std::string_view text) { return ParseCidV0(text).ok() || IsValidCidV1Base32(text); }

Hash32 CidHash(std::string_view cid) { return Keccak256Hash(cid); }

}  // namespace sigil::common
