// The natives behind crypto.subtle's key agreement (globals.js): ECDH on P-256 and X25519 over
// OpenSSL, with raw, SPKI and PKCS #8 key encodings. HPKE-style code (ECDH, then HKDF) runs on them.
#pragma once

#include <duktape.h>

namespace sigil::workers {

// Registers, with `curve` "P-256" or "X25519" (Web Crypto's names) and keys as buffer objects:
//   __sigil_ec_generate(curve)            -> [private, public]: a new key pair from the kernel's
//                                            getrandom (P-256: the 32-byte scalar and the 65-byte
//                                            uncompressed point; X25519: the 32-byte keys)
//   __sigil_ec_public(curve, raw)         -> the public key in that form (P-256 also takes a
//                                            33-byte compressed point), or null when it is not a
//                                            valid point of the curve
//   __sigil_ec_public_of(curve, private)  -> the private key's public key, or null when it is not
//                                            a valid private key
//   __sigil_ec_derive(curve, private, public) -> the shared secret (P-256: the x coordinate), or
//                                            null when the result is the point at infinity or
//                                            X25519's all-zero value
//   __sigil_ec_import_der(format, der)    -> [curve, private or null, public] from an SPKI
//                                            ("spki") or PKCS #8 ("pkcs8") encoding, or null when
//                                            it is malformed or names another algorithm or curve
//   __sigil_ec_export_der(format, curve, private or null, public) -> the SPKI or PKCS #8 encoding
// TypeError for an unknown curve or format or an argument that is not a buffer object. Nothing
// here uses OpenSSL's random generator: the child's seccomp filter kills a process that calls
// getpid, which its fork check does. Run in the zygote (the first calls load what OpenSSL loads
// lazily). Must run inside a protected call.
void InstallWebCryptoEcNatives(duk_context* ctx);

}  // namespace sigil::workers
