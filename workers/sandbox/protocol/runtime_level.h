// What an action's runtime offers, as GET /core/v1/get_action_client_config reports it: shared
// by the sandbox and the worker. The versions come from the build (workers/sandbox/CMakeLists.txt
// reads them from Duktape's header and node_modules), never typed by hand.
#pragma once

#include <array>
#include <string_view>

namespace sigil::workers {

// "duktape <major.minor.patch>".
constexpr std::string_view SANDBOX_ENGINE = SIGIL_SANDBOX_ENGINE;
// The newest ECMAScript edition whose syntax the lowering step accepts (generators and modules
// aside: README "Actions"), and the lowering tools.
constexpr std::string_view SANDBOX_SYNTAX_LEVEL = "es2022";
constexpr std::string_view SANDBOX_LOWERING = SIGIL_SANDBOX_LOWERING;
// 16 hex digits of a SHA-256 over js/lower.js and build/patches/buble.mjs: which build of our own lowering code.
constexpr std::string_view SANDBOX_LOWER_JS_DIGEST = SIGIL_SANDBOX_LOWER_JS_DIGEST;
// The ethers v5 release the sandbox serves (package.json's ethers5 alias).
constexpr std::string_view SANDBOX_ETHERS_VERSION = SIGIL_SANDBOX_ETHERS_VERSION;
// The web globals of every run heap (workers/sandbox/js/globals.js, shims.js, prelude.js).
constexpr std::array<std::string_view, 27> SANDBOX_WEB_GLOBALS = {
    "URL", "URLSearchParams", "TextEncoder", "TextDecoder", "atob", "btoa", "crypto.getRandomValues",
    "crypto.randomUUID", "crypto.subtle", "CryptoKey", "Headers", "Request", "Response", "fetch", "DOMException", "AggregateError",
    "Promise.allSettled", "Promise.any", "queueMicrotask", "structuredClone", "Event", "EventTarget",
    "AbortController", "AbortSignal", "ReadableStream", "WritableStream", "TransformStream"};

}  // namespace sigil::workers
