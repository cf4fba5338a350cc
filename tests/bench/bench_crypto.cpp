// bench_crypto: throughput of common/'s hashes, signatures, EIP-712, CIDv0, AES-GCM and HKDF, with raw
// libsecp256k1 calls as the reference so the wrapper's overhead is visible.
#include <cstdio>
#include <cstring>
#include <string>

#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include "common/aes_gcm.h"
#include "common/cid.h"
#include "common/eip712.h"
#include "common/handles.h"
#include "common/hkdf.h"
#include "common/keccak.h"
#include "common/secp256k1.h"
#include "common/sha256.h"
#include "tests/bench/bench_support.h"

using namespace sigil::common;
using sigil::bench::Measure;
using sigil::bench::Report;
using sigil::bench::ReportThroughput;

namespace {

// Folding every result into a global keeps the compiler from discarding the work being timed.
volatile std::uint8_t g_sink = 0;
void Consume(ByteView b) {
    if (!b.empty()) g_sink = static_cast<std::uint8_t>(g_sink ^ b[0] ^ b[b.size() - 1]);
}

Bytes Pattern(std::size_t n) {
    Bytes out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(i * 31 + (i >> 8));
    return out;
}

// The example of EIP-712 itself (eips.ethereum.org/EIPS/eip-712).
constexpr const char* MAIL_JSON = R"({
  "types": {
    "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                     {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
    "Person": [{"name": "name", "type": "string"}, {"name": "wallet", "type": "address"}],
    "Mail": [{"name": "from", "type": "Person"}, {"name": "to", "type": "Person"}, {"name": "contents", "type": "string"}]
  },
  "primaryType": "Mail",
  "domain": {"name": "Ether Mail", "version": "1", "chainId": 1,
             "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
  "message": {"from": {"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
              "to": {"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},
              "contents": "Hello, Bob!"}
})";

void BenchHashes() {
    for (const std::size_t n : {std::size_t{1024}, std::size_t{1} << 20}) {
        const Bytes data = Pattern(n);
        const std::string suffix = n == 1024 ? " (1 KiB)" : " (1 MiB)";
        ReportThroughput(("Keccak-256" + suffix).c_str(), Measure([&] { Consume(Keccak256Hash(ByteView(data))); }), n);
        ReportThroughput(("SHA-256" + suffix).c_str(), Measure([&] { Consume(Sha256Hash(ByteView(data))); }), n);
    }
}

void BenchSignatures() {
    auto key = PrivateKey::FromBytes(Pattern(32));
    if (!key) {
        std::fprintf(stderr, "bench key refused: %s\n", key.error().message.c_str());
        return;
    }
    Hash32 digest = Keccak256Hash(std::string_view("bench digest"));
    Report("SignDigest (recoverable sign)", Measure([&] {
               const Signature65 sig = SignDigest(*key, digest);
               digest[0] ^= sig[1];  // a fresh digest each time, as in real use
               Consume(sig);
           }));
    const Signature65 sig = SignDigest(*key, digest);
    Report("RecoverPublicKey", Measure([&] {
               auto pub = RecoverPublicKey(digest, sig);
               if (pub) Consume(pub->Uncompressed());
           }));
    Report("RecoverAddress (recover + keccak)", Measure([&] {
               auto address = RecoverAddress(digest, sig);
               if (address) Consume(*address);
           }));

    const Bytes message = Pattern(100);
    Report("EIP-191 sign + recover (100 B message)", Measure([&] {
               const Signature65 s = SignPersonalMessage(*key, message);
               auto address = RecoverAddress(PersonalMessageHash(ByteView(message)), s);
               if (address) Consume(*address);
           }));

    // Reference: the C API directly, with its own context, no wrapper types or checks.
    using Context = CHandle<secp256k1_context, secp256k1_context_destroy>;
    Context ctx(secp256k1_context_create(SECP256K1_CONTEXT_SIGN | SECP256K1_CONTEXT_VERIFY));
    const Bytes seckey = Pattern(32);
    secp256k1_ecdsa_recoverable_signature raw_sig;
    Report("raw secp256k1_ecdsa_sign_recoverable", Measure([&] {
               secp256k1_ecdsa_sign_recoverable(ctx.get(), &raw_sig, digest.data(), seckey.data(), nullptr, nullptr);
               digest[0] ^= raw_sig.data[1];
           }));
    secp256k1_ecdsa_sign_recoverable(ctx.get(), &raw_sig, digest.data(), seckey.data(), nullptr, nullptr);
    secp256k1_pubkey raw_pub;
    Report("raw secp256k1_ecdsa_recover", Measure([&] {
               if (secp256k1_ecdsa_recover(ctx.get(), &raw_pub, &raw_sig, digest.data()) == 1) g_sink = g_sink ^ raw_pub.data[0];
           }));
}

void BenchEncodings() {
    Report("EIP-712 hash (Mail example, parse+hash)", Measure([&] {
               auto digest = HashTypedDataJson(MAIL_JSON);
               if (digest) Consume(*digest);
           }));
    const Bytes file = Pattern(std::size_t{4} << 20);
    ReportThroughput("CIDv0 (4 MiB)", Measure([&] {
                         const std::string cid = ComputeCidV0(ByteView(file));
                         g_sink = g_sink ^ static_cast<std::uint8_t>(cid[10]);
                     }),
                     static_cast<double>(file.size()));
}

void BenchSymmetric() {
    const SecretBytes key(ByteView(Pattern(32)));
    const Bytes nonce = Pattern(AES_GCM_NONCE_SIZE);
    for (const std::size_t n : {std::size_t{1024}, std::size_t{1} << 20}) {
        const Bytes plaintext = Pattern(n);
        const std::string name = n == 1024 ? "AES-256-GCM encrypt (1 KiB)" : "AES-256-GCM encrypt (1 MiB)";
        ReportThroughput(name.c_str(), Measure([&] {
                             auto sealed = AesGcmSeal(key, nonce, {}, plaintext);
                             if (sealed) Consume(*sealed);
                         }),
                         static_cast<double>(n));
    }
    const Bytes root = Pattern(32);
    const Bytes salt = ToBytes("sigil/pkp/v1");
    Bytes info = ToBytes("sign");
    const Bytes rest = Pattern(64);  // account hash || derivation path
    info.insert(info.end(), rest.begin(), rest.end());
    Report("HKDF-SHA256 derivation (32 B out)", Measure([&] {
               auto okm = HkdfSha256(root, salt, info, 32);
               if (okm) Consume(okm->view());
           }));
}

}  // namespace

int main() {
    std::printf("%-40s %14s\n", "benchmark", "rate");
    BenchHashes();
    BenchSignatures();
    BenchEncodings();
    BenchSymmetric();
    return 0;
}
