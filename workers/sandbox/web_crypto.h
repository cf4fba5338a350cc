// The natives behind crypto.subtle (globals.js builds the Web Crypto API over them): SHA digests,
// HMAC and AES-GCM on OpenSSL. Deno, which the deployed implementation of this interface runs
// actions on, has crypto.subtle; actions hash, sign and seal with it.
#pragma once

#include <duktape.h>

namespace sigil::workers {

// Fetches the algorithms (SHA-1/256/384/512, HMAC, AES-128/192/256-GCM) once and registers
//   __sigil_digest(name, data)                      -> ArrayBuffer
//   __sigil_hmac(hash_name, key, data)              -> ArrayBuffer
//   __sigil_aes_gcm(encrypt, key, iv, aad, data, tag_bytes) -> ArrayBuffer, or null when a
//                                                      decryption fails authentication
// (names as the Web Crypto API spells them; data arguments are buffer objects; TypeError for
// anything else). Run in the zygote: a sandbox child may not read OpenSSL's configuration or
// providers from disk (its seccomp filter refuses open), so nothing is fetched after the fork.
// Must run inside a protected call.
void InstallWebCryptoNatives(duk_context* ctx);

}  // namespace sigil::workers
