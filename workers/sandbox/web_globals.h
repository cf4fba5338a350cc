// The web globals of a run heap (URL, TextEncoder, atob, crypto, Headers, Response...): the
// native behind crypto.getRandomValues and the embedded globals.js and npm packages.
#pragma once

#include <duktape.h>

#include <string_view>

namespace sigil::workers {

// Registers `__sigil_random_fill(uint8array)`: fills the view with bytes from the kernel's
// getrandom (allowed by the child's seccomp filter); TypeError for anything but a buffer object
// or one larger than 65536 bytes. globals.js captures it and removes it from the global object.
// Must run inside a protected call.
void InstallWebGlobalsNatives(duk_context* ctx);

// workers/sandbox/js/globals.js: evaluate after the natives and shims.js, then WebPackagesSource.
std::string_view WebGlobalsSource();

// The npm packages joined by js_bundle.mjs (whatwg-url-without-unicode, text-encoding-utf-8,
// base-64, whatwg-fetch); installs the globals through globals.js. Evaluate right after it.
std::string_view WebPackagesSource();

}  // namespace sigil::workers
