// The natives behind crypto.subtle (subtle.js builds the Web Crypto API over them): SHA digests,
// HMAC, AES-GCM, HKDF and PBKDF2 on OpenSSL, and web_crypto_ec.h's key agreement. Deno, which the
// deployed implementation of this interface runs actions on, has crypto.subtle; actions hash,
// sign, seal and derive keys with it.
#pragma once

#include <duktape.h>

namespace sigil::workers {

// Fetches the algorithms (SHA-1/256/384/512, HMAC, AES-128/192/256-GCM, HKDF, PBKDF2) once and
// registers
//   __sigil_digest(name, data)                      -> ArrayBuffer
//   __sigil_hmac(hash_name, key, data)              -> ArrayBuffer
//   __sigil_aes_gcm(encrypt, key, iv, aad, data, tag_bytes) -> ArrayBuffer, or null when a
//                                                      decryption fails authentication
//   __sigil_hkdf(hash_name, ikm, salt, info, length) -> ArrayBuffer of `length` bytes (RFC 5869;
//                                                      RangeError above 255 hash lengths)
//   __sigil_pbkdf2(hash_name, password, salt, iterations, length) -> ArrayBuffer of `length`
//                                                      bytes (RFC 8018 with HMAC; RangeError for
//                                                      0 or more than INT_MAX iterations, or more
//                                                      than 64 KiB)
// and InstallWebCryptoEcNatives' (names as the Web Crypto API spells them; data arguments are
// buffer objects; TypeError for anything else). Run in the zygote: a sandbox child may not read
// OpenSSL's configuration or providers from disk (its seccomp filter refuses open), so nothing is
// fetched after the fork. Must run inside a protected call.
void InstallWebCryptoNatives(duk_context* ctx);

}  // namespace sigil::workers
