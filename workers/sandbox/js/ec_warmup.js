// ec_warmup.js: one of each EC operation on fixed keys, run once in the zygote by
// web_crypto_ec.cpp's WarmUp: OpenSSL fetches the EC and X25519 key management, key exchange,
// encoders and decoders lazily, and a child cannot (it may not open files, nor call getpid).
// Embedded at build time (EC_WARMUP_JS); evaluated as eval code, as the C++ string it was before.
(function (g) {
  ['P-256', 'X25519'].forEach(function (curve) {
    var d = new Uint8Array(32); d[31] = 7;
    var pub = g.__sigil_ec_public_of(curve, d);
    g.__sigil_ec_derive(curve, d, pub);
    g.__sigil_ec_import_der('spki', g.__sigil_ec_export_der('spki', curve, null, pub));
    g.__sigil_ec_import_der('pkcs8', g.__sigil_ec_export_der('pkcs8', curve, d, pub));
  });
})(this)
