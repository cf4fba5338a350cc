// __sigil_crypto and __sigil_keccak256: the natives behind ethers' fast paths in the sandbox.
#include "workers/sandbox/natives/crypto.h"

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include "common/eip712.h"
#include "common/eth_tx.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/keccak.h"
#include "common/secp256k1.h"
#include "common/secret.h"
#include "common/sha256.h"
#include "common/uint256.h"
#include "workers/sandbox/embedded_scripts.h"

namespace sigil::workers {

namespace {

using common::Address20;
using common::ByteView;
using common::Bytes;
using common::Error;
using common::ErrorKind;
using common::Hash32;
using common::MakeError;
using common::PrivateKey;
using common::Result;
using common::SecretBytes;
using common::Signature65;
using common::Uint256;
using Json = rapidjson::Value;

// The args object is shallow; deeper nesting comes only from typed data, which eip712 caps at
// 32 levels per input. Scanning first keeps RapidJSON's writer recursion bounded.
constexpr int MAX_ARGS_NESTING = 40;

Error Bad(std::string message) {
    return MakeError(ErrorKind::InvalidInput, "invalid_crypto_argument", std::move(message));
}

// Holds a copy of the arguments for in-situ parsing (so strings, private keys included, are
// not copied again into RapidJSON's pool) and wipes it on every exit path.
class WipedBuffer {
public:
    explicit WipedBuffer(std::string_view text) : m_bytes(text.begin(), text.end()) { m_bytes.push_back('\0'); }
    ~WipedBuffer() { common::Wipe(m_bytes.data(), m_bytes.size()); }
    WipedBuffer(const WipedBuffer&) = delete;
    WipedBuffer& operator=(const WipedBuffer&) = delete;
    char* data() { return m_bytes.data(); }

private:
    std::vector<char> m_bytes;
};

const Json* Member(const Json& args, const char* key) {
    auto it = args.FindMember(key);
    if (it == args.MemberEnd() || it->value.IsNull()) return nullptr;
    return &it->value;
}

// Argument readers ------------------------------------------------------------------------------

Result<Bytes> HexArg(const Json& args, const char* key) {
    const Json* v = Member(args, key);
    if (v == nullptr || !v->IsString()) return Bad(std::string("invalid BytesLike value (") + key + ")");
    auto bytes = common::HexDecode(common::JsonView(*v), common::HexPrefix::Required);
    if (!bytes.ok()) return Bad(std::string("invalid BytesLike value (") + key + ")");
    return std::move(*bytes);
}

Result<Hash32> Hash32Arg(const Json& args, const char* key) {
    SIGIL_TRY(bytes, HexArg(args, key));
    if (bytes->size() != 32) return Bad(std::string("invalid ") + key + ": expected 32 bytes");
    Hash32 out{};
    std::memcpy(out.data(), bytes->data(), 32);
    return out;
}

int Nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Decodes straight into locked memory so the secret never sits in an ordinary vector.
Result<PrivateKey> PrivateKeyArg(const Json& args, const char* key) {
    const Json* v = Member(args, key);
    if (v == nullptr || !v->IsString()) return Bad("invalid private key");
    std::string_view text = common::JsonView(*v);
    if (text.size() != 66 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return Bad("invalid private key");
    SecretBytes secret(32);
    for (std::size_t i = 0; i < 32; ++i) {
        const int hi = Nibble(text[2 + 2 * i]), lo = Nibble(text[3 + 2 * i]);
        if (hi < 0 || lo < 0) return Bad("invalid private key");
        secret.data()[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    auto parsed = PrivateKey::FromBytes(secret.view());
    if (!parsed.ok()) return Bad("invalid private key");
    return std::move(*parsed);
}

// A JSON integer or a string of decimal digits / "0x" hex, as ethers' getBigInt accepts them
// (negative values are refused: no field here is signed).
Result<Uint256> UintArg(const Json& obj, const char* key) {
    const Json* v = Member(obj, key);
    if (v == nullptr) return Uint256{};
    if (v->IsUint64()) return Uint256::FromUint64(v->GetUint64());
    if (v->IsString()) {
        std::string_view text = common::JsonView(*v);
        auto parsed = (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
                          ? Uint256::FromHex(text)
                          : Uint256::FromDecimal(text);
        if (parsed.ok()) return *parsed;
    }
    return Bad(std::string("invalid transaction: invalid BigNumberish value (") + key + ")");
}

Result<std::uint64_t> Uint64Arg(const Json& obj, const char* key) {
    SIGIL_TRY(value, UintArg(obj, key));
    auto small = value->ToUint64();
    if (!small) return Bad(std::string("invalid transaction: ") + key + " out of range");
    return *small;
}

Result<Address20> AddressArg(const Json& obj, const char* key) {
    const Json* v = Member(obj, key);
    if (v == nullptr || !v->IsString()) return Bad("invalid address");
    auto parsed = common::ParseAddress(common::JsonView(*v));
    if (!parsed.ok()) return Bad("invalid address");
    return *parsed;
}

// Result writers -------------------------------------------------------------------------------

std::string HexResult(ByteView bytes) { return common::JsonQuote(common::HexEncode(bytes, true)); }

// ethers serializes signatures with v = 27 + yParity (SignDigest gives 0/1, SignPersonalMessage
// 27/28).
std::string SignatureResult(Signature65 sig) {
    if (sig[64] < 27) sig[64] = static_cast<std::uint8_t>(27 + sig[64]);
    return HexResult(sig);
}

std::string KeyInfoResult(const common::PublicKey& key) {
    return "{\"publicKey\":" + HexResult(key.Uncompressed()) + ",\"compressedPublicKey\":" +
           HexResult(key.Compressed()) + ",\"address\":" + common::JsonQuote(common::ChecksumAddress(key.Address())) + "}";
}

// Operations -----------------------------------------------------------------------------------

Result<std::string> OpKeccak(const Json& args) {
    SIGIL_TRY(data, HexArg(args, "data"));
    return HexResult(common::Keccak256Hash(*data));
}

Result<std::string> OpSha256(const Json& args) {
    SIGIL_TRY(data, HexArg(args, "data"));
    return HexResult(common::Sha256Hash(ByteView(*data)));
}

// ethers' SupportedAlgorithm names (utils.computeHmac, pbkdf2).
const EVP_MD* HmacDigest(const Json& args) {
    const Json* v = Member(args, "algorithm");
    if (v == nullptr || !v->IsString()) return nullptr;
    const std::string_view name = common::JsonView(*v);
    return name == "sha256" ? EVP_sha256() : name == "sha512" ? EVP_sha512() : nullptr;
}

// utils.computeHmac(algorithm, key, data): "0x" + hex of the HMAC.
Result<std::string> OpComputeHmac(const Json& args) {
    const EVP_MD* md = HmacDigest(args);
    if (md == nullptr) return Bad("unsupported algorithm");
    SIGIL_TRY(key, HexArg(args, "key"));
    SIGIL_TRY(data, HexArg(args, "data"));
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (HMAC(md, key->data(), static_cast<int>(key->size()), data->data(), data->size(), out, &len) == nullptr) {
        return Bad("hmac failed");
    }
    return HexResult(ByteView(out, len));
}

// Mnemonic seeds and JSON wallets: at most this many iterations and output bytes (BIP-39 uses
// 2048 and 64; ethers' JSON wallets 262144 and 32), so one call stays within a run's limits.
constexpr std::uint64_t MAX_PBKDF2_ITERATIONS = 10'000'000;
constexpr std::uint64_t MAX_PBKDF2_KEYLEN = 1024;

// @ethersproject/pbkdf2's pbkdf2(password, salt, iterations, keylen, algorithm): "0x" + hex.
Result<std::string> OpPbkdf2(const Json& args) {
    const EVP_MD* md = HmacDigest(args);
    if (md == nullptr) return Bad("unsupported algorithm");
    SIGIL_TRY(password, HexArg(args, "password"));
    SIGIL_TRY(salt, HexArg(args, "salt"));
    const Json* iterations = Member(args, "iterations");
    const Json* keylen = Member(args, "keylen");
    if (iterations == nullptr || !iterations->IsUint64() || iterations->GetUint64() == 0 ||
        iterations->GetUint64() > MAX_PBKDF2_ITERATIONS || keylen == nullptr || !keylen->IsUint64() ||
        keylen->GetUint64() == 0 || keylen->GetUint64() > MAX_PBKDF2_KEYLEN) {
        return Bad("invalid pbkdf2 parameters");
    }
    SecretBytes out(static_cast<std::size_t>(keylen->GetUint64()));
    if (PKCS5_PBKDF2_HMAC(reinterpret_cast<const char*>(password->data()), static_cast<int>(password->size()),
                          salt->data(), static_cast<int>(salt->size()), static_cast<int>(iterations->GetUint64()), md,
                          static_cast<int>(out.size()), out.data()) != 1) {
        return Bad("pbkdf2 failed");
    }
    return HexResult(out.view());
}

Result<std::string> OpPublicKey(const Json& args) {
    const Json* v = Member(args, "key");
    if (v != nullptr && v->IsString() && v->GetStringLength() == 66) {
        SIGIL_TRY(key, PrivateKeyArg(args, "key"));
        return KeyInfoResult(key->PublicKey());
    }
    SIGIL_TRY(bytes, HexArg(args, "key"));
    auto key = common::PublicKey::Parse(*bytes);
    if (!key.ok()) return Bad("invalid public key");
    return KeyInfoResult(*key);
}

Result<std::string> OpHashMessage(const Json& args) {
    SIGIL_TRY(message, HexArg(args, "message"));
    return HexResult(common::PersonalMessageHash(ByteView(*message)));
}

Result<std::string> OpSignMessage(const Json& args) {
    SIGIL_TRY(key, PrivateKeyArg(args, "privateKey"));
    SIGIL_TRY(message, HexArg(args, "message"));
    return SignatureResult(common::SignPersonalMessage(*key, *message));
}

Result<std::string> OpSignDigest(const Json& args) {
    SIGIL_TRY(key, PrivateKeyArg(args, "privateKey"));
    SIGIL_TRY(digest, Hash32Arg(args, "digest"));
    return SignatureResult(common::SignDigest(*key, *digest));
}

// EIP-2098 compact form: yParity is the top bit of the second word.
Result<Signature65> ExpandSignature(Bytes sig) {
    if (sig.size() == 64) {
        Signature65 out{};
        std::memcpy(out.data(), sig.data(), 64);
        out[64] = static_cast<std::uint8_t>(out[32] >> 7);
        out[32] &= 0x7f;
        return out;
    }
    if (sig.size() != 65) return Bad("invalid signature");
    Signature65 out{};
    std::memcpy(out.data(), sig.data(), 65);
    return out;
}

Result<std::string> OpRecover(const Json& args) {
    SIGIL_TRY(digest, Hash32Arg(args, "digest"));
    SIGIL_TRY(raw, HexArg(args, "signature"));
    SIGIL_TRY(sig, ExpandSignature(std::move(*raw)));
    auto key = common::RecoverPublicKey(*digest, *sig);
    if (!key.ok()) return Bad("invalid signature");
    return "{\"address\":" + common::JsonQuote(common::ChecksumAddress(key->Address())) +
           ",\"publicKey\":" + HexResult(key->Uncompressed()) + "}";
}

// ethers' getAddress: "0x" optional; mixed case must carry a valid EIP-55 checksum.
Result<std::string> OpGetAddress(const Json& args) {
    const Json* v = Member(args, "address");
    if (v == nullptr || !v->IsString()) return Bad("invalid address");
    std::string text(common::JsonView(*v));
    if (text.size() == 40) text = "0x" + text;
    if (text.size() == 42 && text[1] == 'X') return Bad("invalid address");
    auto parsed = common::ParseAddress(text, false);
    if (!parsed.ok()) return Bad("invalid address");
    const std::string checksummed = common::ChecksumAddress(*parsed);
    const std::string_view digits = std::string_view(text).substr(2);
    bool has_lower = false, has_upper = false;
    for (char c : digits) {
        has_lower = has_lower || (c >= 'a' && c <= 'f');
        has_upper = has_upper || (c >= 'A' && c <= 'F');
    }
    if (has_lower && has_upper && text != checksummed) return Bad("bad address checksum");
    return common::JsonQuote(checksummed);
}

Result<common::TypedData> TypedDataArg(const Json& args) {
    const Json* domain = Member(args, "domain");
    const Json* types = Member(args, "types");
    const Json* value = Member(args, "value");
    if (domain == nullptr || types == nullptr || value == nullptr) {
        return Bad("invalid typed data: domain, types and value are required");
    }
    auto parsed = common::TypedData::FromParts(common::JsonSerialize(*domain), common::JsonSerialize(*types), common::JsonSerialize(*value));
    if (!parsed.ok()) return Bad("invalid typed data: " + parsed.error().message);
    return std::move(*parsed);
}

Result<std::string> OpTypedDataHash(const Json& args) {
    SIGIL_TRY(typed, TypedDataArg(args));
    SIGIL_TRY(encoded, typed->EncodeType(typed->PrimaryType()));
    return "{\"digest\":" + HexResult(typed->Digest()) + ",\"domainSeparator\":" +
           HexResult(typed->DomainSeparator()) + ",\"messageHash\":" + HexResult(typed->MessageHash()) +
           ",\"primaryType\":" + common::JsonQuote(typed->PrimaryType()) + ",\"encodedType\":" + common::JsonQuote(*encoded) + "}";
}

Result<std::string> OpSignTypedData(const Json& args) {
    SIGIL_TRY(key, PrivateKeyArg(args, "privateKey"));
    SIGIL_TRY(typed, TypedDataArg(args));
    return SignatureResult(common::SignDigest(*key, typed->Digest()));
}

// Transactions ---------------------------------------------------------------------------------

struct TxCommon {
    std::uint64_t chain_id = 0;
    std::uint64_t nonce = 0;
    std::uint64_t gas_limit = 0;
    std::optional<Address20> to;
    Uint256 value;
    Bytes data;
};

Result<TxCommon> TxCommonArg(const Json& tx) {
    TxCommon out;
    SIGIL_TRY(chain_id, Uint64Arg(tx, "chainId"));
    SIGIL_TRY(nonce, Uint64Arg(tx, "nonce"));
    SIGIL_TRY(gas_limit, Uint64Arg(tx, "gasLimit"));
    SIGIL_TRY(value, UintArg(tx, "value"));
    out.chain_id = *chain_id;
    out.nonce = *nonce;
    out.gas_limit = *gas_limit;
    out.value = *value;
    if (Member(tx, "to") != nullptr) {
        SIGIL_TRY(to, AddressArg(tx, "to"));
        out.to = *to;
    }
    if (Member(tx, "data") != nullptr) {
        auto data = HexArg(tx, "data");
        if (!data.ok()) return Bad("invalid transaction: invalid BytesLike value (data)");
        out.data = std::move(*data);
    }
    return out;
}

Hash32 Word(const Signature65& sig, std::size_t offset) {
    Hash32 out{};
    std::memcpy(out.data(), sig.data() + offset, 32);
    return out;
}

Result<std::string> SignEip1559(const PrivateKey& key, const Json& tx, TxCommon base) {
    common::Eip1559Tx t;
    t.chain_id = base.chain_id;
    t.nonce = base.nonce;
    t.gas_limit = base.gas_limit;
    t.to = base.to;
    t.value = base.value;
    t.data = std::move(base.data);
    SIGIL_TRY(max_fee, UintArg(tx, "maxFeePerGas"));
    SIGIL_TRY(max_priority, UintArg(tx, "maxPriorityFeePerGas"));
    if (Member(tx, "maxFeePerGas") != nullptr && Member(tx, "maxPriorityFeePerGas") != nullptr &&
        *max_priority > *max_fee) {
        return Bad("invalid transaction: priorityFee cannot be more than maxFee");
    }
    t.max_fee_per_gas = *max_fee;
    t.max_priority_fee_per_gas = *max_priority;
    const Signature65 sig = common::SignDigest(key, common::SigningHash(t));
    auto raw = common::EncodeSigned(t, sig[64], Word(sig, 0), Word(sig, 32));
    if (!raw.ok()) return Bad("invalid transaction: " + raw.error().message);
    return HexResult(*raw);
}

common::LegacyTx LegacyFrom(TxCommon& base, const Uint256& gas_price) {
    common::LegacyTx t;
    t.nonce = base.nonce;
    t.gas_limit = base.gas_limit;
    t.to = base.to;
    t.value = base.value;
    t.data = std::move(base.data);
    t.gas_price = gas_price;
    return t;
}

// Legacy (type 0): EIP-155 when chainId != 0 (v = chainId * 2 + 35 + yParity), else the
// original Homestead form (v = 27 + yParity), as ethers serializes them.
Result<std::string> SignLegacy(const PrivateKey& key, const Json& tx, TxCommon base) {
    SIGIL_TRY(gas_price, UintArg(tx, "gasPrice"));
    const common::LegacyTx t = LegacyFrom(base, *gas_price);
    const Signature65 sig = common::SignDigest(key, common::LegacySigningHash(t, base.chain_id));
    auto raw = common::EncodeSignedLegacy(t, base.chain_id, sig[64], Word(sig, 0), Word(sig, 32));
    if (!raw.ok()) return Bad("invalid transaction: " + raw.error().message);
    return HexResult(*raw);
}

// EIP-2930 (type 1) with an empty access list: ethers picks it for a transaction that has a
// gasPrice and no explicit type.
Result<std::string> SignEip2930(const PrivateKey& key, const Json& tx, TxCommon base) {
    SIGIL_TRY(gas_price, UintArg(tx, "gasPrice"));
    const common::LegacyTx t = LegacyFrom(base, *gas_price);
    const Signature65 sig =
        common::SignDigest(key, common::Keccak256Hash(common::Eip2930SigningPayload(t, base.chain_id)));
    auto raw = common::EncodeSignedEip2930(t, base.chain_id, sig[64], Word(sig, 0), Word(sig, 32));
    if (!raw.ok()) return Bad("invalid transaction: " + raw.error().message);
    return HexResult(*raw);
}

Result<std::string> OpSignTransaction(const Json& args) {
    SIGIL_TRY(key, PrivateKeyArg(args, "privateKey"));
    const Json* tx = Member(args, "tx");
    if (tx == nullptr || !tx->IsObject()) return Bad("invalid transaction: expected an object");
    SIGIL_TRY(type, Uint64Arg(*tx, "type"));
    SIGIL_TRY(base, TxCommonArg(*tx));
    if (*type == 2) return SignEip1559(*key, *tx, std::move(*base));
    if (*type == 1) return SignEip2930(*key, *tx, std::move(*base));
    if (*type == 0) return SignLegacy(*key, *tx, std::move(*base));
    return Bad("unsupported transaction type " + std::to_string(*type));
}

// Dispatch -------------------------------------------------------------------------------------

struct Operation {
    std::string_view name;
    Result<std::string> (*run)(const Json& args);
};

constexpr Operation OPERATIONS[] = {
    {"keccak256", OpKeccak},
    {"sha256", OpSha256},
    {"computeHmac", OpComputeHmac},
    {"pbkdf2", OpPbkdf2},
    {"publicKey", OpPublicKey},
    {"hashMessage", OpHashMessage},
    {"signMessage", OpSignMessage},
    {"signDigest", OpSignDigest},
    {"recover", OpRecover},
    {"getAddress", OpGetAddress},
    {"typedDataHash", OpTypedDataHash},
    {"signTypedData", OpSignTypedData},
    {"signTransaction", OpSignTransaction},
};

// Duktape glue ---------------------------------------------------------------------------------
// Duktape errors longjmp, so no C++ object with a destructor may be alive across a Duktape call
// that can throw. The native copies its arguments into these scratch strings, runs the C++ work
// in RunScratch (whose locals all die before it returns), and only then pushes or throws.

thread_local std::string g_name;
thread_local std::string g_args;
thread_local std::string g_result;
thread_local bool g_ok = false;
// Used when even storing the error text fails (out of memory).
constexpr const char* FALLBACK_ERROR = "crypto operation failed";

void RunScratch() noexcept {
    try {
        auto result = RunCryptoOp(g_name, g_args);
        common::Wipe(g_args.data(), g_args.size());
        g_ok = result.ok();
        g_result = g_ok ? std::move(*result) : result.error().message;
    } catch (...) {
        common::Wipe(g_args.data(), g_args.size());
        g_ok = false;
        g_result.clear();
    }
}

bool CopyScratch(const char* name, std::size_t name_len, const char* args, std::size_t args_len) noexcept {
    try {
        g_name.assign(name, name_len);
        common::Wipe(g_args.data(), g_args.size());
        g_args.assign(args, args_len);
        return true;
    } catch (...) {
        return false;
    }
}

duk_ret_t NativeCrypto(duk_context* ctx) {
    duk_size_t name_len = 0, args_len = 0;
    const char* name = duk_require_lstring(ctx, 0, &name_len);
    const char* args = duk_require_lstring(ctx, 1, &args_len);
    if (args_len > MAX_CRYPTO_ARGS_BYTES) return duk_error(ctx, DUK_ERR_RANGE_ERROR, "crypto input too large");
    if (!CopyScratch(name, name_len, args, args_len)) return duk_error(ctx, DUK_ERR_ERROR, "%s", FALLBACK_ERROR);
    RunScratch();
    if (!g_ok) {
        return duk_error(ctx, DUK_ERR_ERROR, "%s", g_result.empty() ? FALLBACK_ERROR : g_result.c_str());
    }
    duk_push_lstring(ctx, g_result.data(), g_result.size());
    return 1;
}

// __sigil_keccak256(Uint8Array) -> "0x" + 64 hex. Only plain data on this frame: the hash and
// its text are written into fixed arrays before anything is pushed.
duk_ret_t NativeKeccak256(duk_context* ctx) {
    duk_size_t len = 0;
    void* data = duk_get_buffer_data(ctx, 0, &len);
    if (data == nullptr && len == 0 && !duk_is_buffer_data(ctx, 0)) {
        return duk_error(ctx, DUK_ERR_TYPE_ERROR, "keccak256 expects a Uint8Array");
    }
    static constexpr char HEX[] = "0123456789abcdef";
    char text[2 + 64];
    {
        const Hash32 hash = common::Keccak256Hash(ByteView(static_cast<const std::uint8_t*>(data), len));
        text[0] = '0';
        text[1] = 'x';
        for (std::size_t i = 0; i < 32; ++i) {
            text[2 + 2 * i] = HEX[hash[i] >> 4];
            text[3 + 2 * i] = HEX[hash[i] & 15];
        }
    }
    duk_push_lstring(ctx, text, sizeof(text));
    return 1;
}

}  // namespace

Result<std::string> RunCryptoOp(std::string_view name, std::string_view args_json) {
    if (args_json.size() > MAX_CRYPTO_ARGS_BYTES) {
        return MakeError(ErrorKind::TooLarge, "crypto_args_too_large", "crypto input too large");
    }
    const Operation* op = nullptr;
    for (const auto& candidate : OPERATIONS) {
        if (candidate.name == name) op = &candidate;
    }
    if (op == nullptr) return MakeError(ErrorKind::InvalidInput, "unknown_crypto_operation", "unknown crypto operation");
    if (!common::JsonNestingWithin(args_json, MAX_ARGS_NESTING)) return Bad("invalid typed data: nested too deeply");
    WipedBuffer buffer(args_json);
    rapidjson::Document doc;
    doc.ParseInsitu<rapidjson::kParseIterativeFlag>(buffer.data());
    if (doc.HasParseError() || !doc.IsObject()) {
        return MakeError(ErrorKind::MalformedJson, "invalid_crypto_json", "crypto arguments are not a JSON object");
    }
    return op->run(doc);
}

void InstallCryptoNatives(duk_context* ctx) {
    // OpenSSL fetches HMAC and PBKDF2 from its provider on first use; here, in the zygote, so a
    // child never does (its seccomp filter refuses the file reads that may take).
    static const bool fetched = [] {
        unsigned char out[64];
        for (const EVP_MD* md : {EVP_sha256(), EVP_sha512()}) PKCS5_PBKDF2_HMAC("", 0, out, 1, 1, md, sizeof out, out);
        return true;
    }();
    (void)fetched;
    duk_push_c_function(ctx, NativeCrypto, 2);
    duk_put_global_string(ctx, "__sigil_crypto");
    duk_push_c_function(ctx, NativeKeccak256, 1);
    duk_put_global_string(ctx, "__sigil_keccak256");
}

std::string_view EthersSource() {
    return {reinterpret_cast<const char*>(embedded::ETHERS_JS), embedded::ETHERS_JS_SIZE};
}

}  // namespace sigil::workers
