// The web globals of a run heap (URL, TextEncoder, atob, crypto, Headers, Response...): the
// native behind crypto.getRandomValues and the embedded globals.js and npm packages.
#pragma once

#include <duktape.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace sigil::workers {

// Registers `__sigil_random_fill(uint8array)`: fills the view with bytes from the kernel's
// getrandom (allowed by the child's seccomp filter); TypeError for anything but a buffer object
// or one larger than 65536 bytes. globals.js captures it and removes it from the global object.
// Also `__sigil_utf8_encode(string)`: the string as well-formed UTF-8 in a new Uint8Array
// (TextEncoder.encode), and `__sigil_utf8_decode(bytes, fatal, ignoreBOM)`: the Encoding
// Standard's UTF-8 decode of a whole buffer (TextDecoder.decode without `stream`), and
// `__sigil_unorm()`: compiles the embedded unorm (npm) and answers its {nfc, nfd, nfkc, nfkd}
// (String.prototype.normalize loads it on first use), and InstallRegExpUnicodeNatives' (RegExp's
// u and v flags). Must run inside a protected call.
void InstallWebGlobalsNatives(duk_context* ctx);

// Duktape keeps a string built from UTF-16 surrogates (String.fromCharCode, TextDecoder, JSON
// escapes) as one 3-byte sequence per surrogate (CESU-8), which is not UTF-8: this gives each pair
// its 4-byte UTF-8 form and a lone surrogate U+FFFD, as V8 writes strings to UTF-8.
std::string WellFormedUtf8(const char* text, std::size_t len);

// workers/sandbox/js/globals.js followed by js/subtle.js (crypto.subtle) and js/regexp.js (RegExp
// with the u, v and s flags): evaluate after the natives and shims.js, then WebPackagesSource.
std::string_view WebGlobalsSource();

// The npm packages joined by js_bundle.mjs (whatwg-url-without-unicode, text-encoding-utf-8,
// base-64, whatwg-fetch); installs the globals through globals.js. Evaluate right after it.
std::string_view WebPackagesSource();

}  // namespace sigil::workers
