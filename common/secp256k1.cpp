#include "common/secp256k1.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include "common/handles.h"
#include "common/keccak.h"
#include "common/random.h"

namespace sigil::common {
namespace {

using Secp256k1Context = CHandle<secp256k1_context, secp256k1_context_destroy>;

// Half the curve order, n/2 (big-endian). A signature with s above this is the malleated twin.
constexpr std::uint8_t HALF_ORDER[32] = {
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
};

[[noreturn]] void Fatal(const char* what) {
    std::fprintf(stderr, "sigil: secp256k1: %s\n", what);
    std::abort();
}

// One context for the whole process, created and randomized on first use (thread-safe static
// initialization). All later use is read-only, which libsecp256k1 allows from many threads.
const secp256k1_context* Context() {
    static const Secp256k1Context ctx = [] {
        Secp256k1Context c(secp256k1_context_create(SECP256K1_CONTEXT_NONE));
        if (!c) Fatal("context_create failed");
        SecretBytes seed = RandomSecret(32);
        if (secp256k1_context_randomize(c.get(), seed.data()) != 1) Fatal("context_randomize failed");
        return c;
    }();
    return ctx.get();
}

Error InvalidSignature(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_signature", std::move(message));
}

std::array<std::uint8_t, 65> SerializeUncompressed(const secp256k1_pubkey& pub) {
    std::array<std::uint8_t, 65> out{};
    std::size_t len = out.size();
    if (secp256k1_ec_pubkey_serialize(Context(), out.data(), &len, &pub, SECP256K1_EC_UNCOMPRESSED) != 1 ||
        len != out.size()) {
        Fatal("pubkey_serialize failed");
    }
    return out;
}

secp256k1_pubkey ParsedPoint(const std::array<std::uint8_t, 65>& uncompressed) {
    secp256k1_pubkey pub;
    if (secp256k1_ec_pubkey_parse(Context(), &pub, uncompressed.data(), uncompressed.size()) != 1) {
        Fatal("stored public key no longer parses");
    }
    return pub;
}

// Big-endian 32-byte comparison; not constant time (only public values reach it).
bool GreaterThan(const std::uint8_t* a, const std::uint8_t* b) {
    return std::memcmp(a, b, 32) > 0;
}

}  // namespace

// PublicKey -----------------------------------------------------------------------------------

Result<PublicKey> PublicKey::Parse(ByteView serialized) {
    const bool uncompressed = serialized.size() == 65 && serialized[0] == 0x04;
    const bool compressed = serialized.size() == 33 && (serialized[0] == 0x02 || serialized[0] == 0x03);
    secp256k1_pubkey pub;
    if ((!uncompressed && !compressed) ||
        secp256k1_ec_pubkey_parse(Context(), &pub, serialized.data(), serialized.size()) != 1) {
        return MakeError(ErrorKind::InvalidInput, "invalid_public_key",
                         "public key must be 65 bytes (0x04...) or 33 bytes (0x02/0x03...) and lie on secp256k1");
    }
    return PublicKey(SerializeUncompressed(pub));
}

std::array<std::uint8_t, 33> PublicKey::Compressed() const {
    const secp256k1_pubkey pub = ParsedPoint(m_uncompressed);
    std::array<std::uint8_t, 33> out{};
    std::size_t len = out.size();
    if (secp256k1_ec_pubkey_serialize(Context(), out.data(), &len, &pub, SECP256K1_EC_COMPRESSED) != 1 ||
        len != out.size()) {
        Fatal("pubkey_serialize failed");
    }
    return out;
}

Address20 PublicKey::Address() const { return AddressFromPublicKey(*this); }

// PrivateKey ----------------------------------------------------------------------------------

Result<PrivateKey> PrivateKey::FromBytes(ByteView bytes) {
    if (bytes.size() != 32 || secp256k1_ec_seckey_verify(Context(), bytes.data()) != 1) {
        return MakeError(ErrorKind::InvalidInput, "invalid_private_key",
                         "private key must be 32 bytes encoding an integer in [1, n-1]");
    }
    return PrivateKey(SecretBytes(bytes));
}

PrivateKey PrivateKey::Generate() {
    // The chance that 32 random bytes are 0 or >= n is about 2^-128; loop instead of reducing
    // so the distribution stays uniform.
    for (;;) {
        SecretBytes candidate = RandomSecret(32);
        if (secp256k1_ec_seckey_verify(Context(), candidate.data()) == 1) return PrivateKey(std::move(candidate));
    }
}

common::PublicKey PrivateKey::PublicKey() const {
    secp256k1_pubkey pub;
    if (secp256k1_ec_pubkey_create(Context(), &pub, m_secret.data()) != 1) Fatal("pubkey_create failed");
    return common::PublicKey(SerializeUncompressed(pub));
}

Address20 PrivateKey::Address() const { return PublicKey().Address(); }

// Addresses -----------------------------------------------------------------------------------

Address20 AddressFromPublicKey(const PublicKey& key) {
    const Hash32 h = Keccak256Hash(ByteView(key.Uncompressed()).subspan(1));
    Address20 out;
    std::memcpy(out.data(), h.data() + 12, out.size());
    return out;
}

std::string ChecksumAddress(const Address20& address) {
    static constexpr char DIGITS[] = "0123456789abcdef";
    std::string lower;
    lower.reserve(40);
    for (std::uint8_t b : address) {
        lower.push_back(DIGITS[b >> 4]);
        lower.push_back(DIGITS[b & 0x0f]);
    }
    const Hash32 h = Keccak256Hash(std::string_view(lower));
    std::string out = "0x";
    for (std::size_t i = 0; i < lower.size(); ++i) {
        const std::uint8_t nibble = (i % 2 == 0) ? (h[i / 2] >> 4) : (h[i / 2] & 0x0f);
        char c = lower[i];
        if (c >= 'a' && nibble >= 8) c = static_cast<char>(c - 'a' + 'A');
        out.push_back(c);
    }
    return out;
}

Result<Address20> ParseAddress(std::string_view text, bool require_checksum_if_mixed_case) {
    auto invalid = [](std::string message) {
        return MakeError(ErrorKind::InvalidInput, "invalid_address", std::move(message));
    };
    if (text.size() != 42 || text[0] != '0' || text[1] != 'x') {
        return invalid("address must be 0x followed by 40 hex characters");
    }
    bool has_lower = false, has_upper = false;
    Address20 out{};
    for (std::size_t i = 0; i < 40; ++i) {
        const char c = text[2 + i];
        int v;
        if (c >= '0' && c <= '9') {
            v = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            v = c - 'a' + 10;
            has_lower = true;
        } else if (c >= 'A' && c <= 'F') {
            v = c - 'A' + 10;
            has_upper = true;
        } else {
            return invalid("address contains a non-hex character");
        }
        out[i / 2] = static_cast<std::uint8_t>(out[i / 2] | (i % 2 == 0 ? v << 4 : v));
    }
    if (has_lower && has_upper && require_checksum_if_mixed_case && ChecksumAddress(out) != text) {
        return invalid("mixed-case address fails its EIP-55 checksum");
    }
    return out;
}

// Signatures ----------------------------------------------------------------------------------

Signature65 SignDigest(const PrivateKey& key, const Hash32& digest) {
    secp256k1_ecdsa_recoverable_signature sig;
    if (secp256k1_ecdsa_sign_recoverable(Context(), &sig, digest.data(), key.Secret().data(), nullptr, nullptr) != 1) {
        // Only possible for an invalid key, which PrivateKey cannot hold.
        Fatal("sign_recoverable failed");
    }
    Signature65 out{};
    int recid = 0;
    if (secp256k1_ecdsa_recoverable_signature_serialize_compact(Context(), out.data(), &recid, &sig) != 1) {
        Fatal("signature serialize failed");
    }
    out[64] = static_cast<std::uint8_t>(recid);
    return out;
}

Result<PublicKey> RecoverPublicKey(const Hash32& digest, ByteView signature) {
    if (signature.size() != 65) return InvalidSignature("signature must be 65 bytes (r || s || v)");
    int recid;
    switch (signature[64]) {
        case 0: case 27: recid = 0; break;
        case 1: case 28: recid = 1; break;
        default: return InvalidSignature("signature v must be 0, 1, 27 or 28");
    }
    // libsecp256k1 would accept a high s here; Ethereum (EIP-2) does not.
    if (GreaterThan(signature.data() + 32, HALF_ORDER)) return InvalidSignature("signature s is above n/2 (EIP-2)");
    static constexpr std::uint8_t ZERO[32] = {};
    if (std::memcmp(signature.data(), ZERO, 32) == 0 || std::memcmp(signature.data() + 32, ZERO, 32) == 0) {
        return InvalidSignature("signature r and s must be non-zero");
    }
    secp256k1_ecdsa_recoverable_signature sig;
    // Refuses r >= n (s >= n is already excluded above).
    if (secp256k1_ecdsa_recoverable_signature_parse_compact(Context(), &sig, signature.data(), recid) != 1) {
        return InvalidSignature("signature r or s is not below the curve order");
    }
    secp256k1_pubkey pub;
    if (secp256k1_ecdsa_recover(Context(), &pub, &sig, digest.data()) != 1) {
        return MakeError(ErrorKind::InvalidInput, "signature_recovery_failed",
                         "no public key matches this signature and digest");
    }
    return PublicKey(SerializeUncompressed(pub));
}

Result<Address20> RecoverAddress(const Hash32& digest, ByteView signature) {
    auto pub = RecoverPublicKey(digest, signature);
    if (!pub) return pub.error();
    return pub->Address();
}

// EIP-191 -------------------------------------------------------------------------------------

Hash32 PersonalMessageHash(ByteView message) {
    Keccak256 h;
    h.Update(AsBytes("\x19" "Ethereum Signed Message:\n"));
    h.Update(AsBytes(std::to_string(message.size())));
    // Skip empty input: an empty span may carry a null pointer, which memcpy must not see.
    if (!message.empty()) h.Update(message);
    return h.Final();
}

Signature65 SignPersonalMessage(const PrivateKey& key, ByteView message) {
    Signature65 sig = SignDigest(key, PersonalMessageHash(message));
    sig[64] = static_cast<std::uint8_t>(sig[64] + 27);
    return sig;
}

}  // namespace sigil::common
