// Native crypto behind the sandbox's `ethers` (ethers v5 from npm, whose secp256k1 and keccak256
// take these fast paths): two Duktape natives over common/.
#pragma once

#include <duktape.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sigil::workers {

// Largest argsJson one __sigil_crypto call accepts (a message to sign travels as hex, so this
// allows about 2 MiB of message bytes). Checked before any parsing.
constexpr std::size_t MAX_CRYPTO_ARGS_BYTES = 4u * 1024u * 1024u;

// Registers the global natives `__sigil_crypto(name, argsJson) -> resultJson` and
// `__sigil_keccak256(Uint8Array) -> "0x" + 64 hex` in `ctx`. The ethers runtime (EthersSource)
// captures both and removes them from the global object; nothing else should call them. The native throws a JS Error whose message is RunCryptoOp's error message
// (never secret material) when the operation fails, and a TypeError when name or argsJson is
// not a string. Must run inside a protected call (it pushes onto the value stack).
void InstallCryptoNatives(duk_context* ctx);

// The embedded ethers runtime: ethers v5 (node_modules/ethers5, pinned) lowered and patched at
// build time by build/ethers_lower.mjs; defines the global `ethers`, using the natives above when
// they are installed (ethers' own code otherwise). Evaluate after InstallCryptoNatives,
// shims.js and prelude.js. Points at static storage, NUL-terminated just past its end.
std::string_view EthersSource();

// The operation behind __sigil_crypto, without Duktape (unit tests and fuzzing call it directly).
// `args_json` is a JSON object; byte strings are "0x"-prefixed hex (either case, even length),
// integers are JSON integers or strings of decimal digits or "0x" + hex. The result is a JSON
// text. Operations ("name": arguments -> result):
//   "keccak256":      {data}                                  -> "0x" + 64 hex
//   "sha256":         {data}                                  -> "0x" + 64 hex
//   "publicKey":      {key}  32-byte private key, or 33/65-byte SEC1 public key
//                          -> {publicKey (0x04.., 65 bytes), compressedPublicKey, address (EIP-55)}
//   "hashMessage":    {message}                               -> EIP-191 digest
//   "signMessage":    {privateKey, message}                   -> 65-byte signature, v 27/28
//   "signDigest":     {privateKey, digest (32 bytes)}         -> 65-byte signature, v 27/28
//   "recover":        {digest, signature (65 bytes, v 0/1/27/28, or 64-byte EIP-2098 compact)}
//                                                             -> {address, publicKey}
//   "getAddress":     {address ("0x" optional)}               -> EIP-55 address
//   "typedDataHash":  {domain, types, value}  (ethers' signTypedData arguments)
//                          -> {digest, domainSeparator, messageHash, primaryType, encodedType}
//   "signTypedData":  {privateKey, domain, types, value}      -> 65-byte signature, v 27/28
//   "signTransaction":{privateKey, tx: {type (0, 1 or 2), chainId, nonce, gasLimit, gasPrice,
//                      maxFeePerGas, maxPriorityFeePerGas, to (address or null), value, data}}
//                          -> raw signed transaction hex (type 2: EIP-1559; type 1: EIP-2930
//                             with an empty access list; type 0: legacy, EIP-155 when
//                             chainId != 0)
// Signatures are RFC 6979 deterministic with low s, byte-identical to ethers'.
// Errors (messages read like ethers'): InvalidInput "invalid_crypto_argument" for malformed
// arguments ("invalid BytesLike value", "invalid private key", "invalid address",
// "bad address checksum", "invalid signature", "invalid typed data: ...",
// "invalid transaction: ..."), "unknown_crypto_operation" for another name; TooLarge
// "crypto_args_too_large" above MAX_CRYPTO_ARGS_BYTES; MalformedJson "invalid_crypto_json".
// `args_json` may hold a private key: the caller wipes its own copy afterwards.
common::Result<std::string> RunCryptoOp(std::string_view name, std::string_view args_json);

}  // namespace sigil::workers
