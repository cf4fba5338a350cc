#include "workers/sandbox/natives/web_globals.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include <sys/random.h>

#include "workers/sandbox/natives/regexp_unicode.h"
#include "workers/sandbox/embedded_scripts.h"

namespace sigil::workers {

namespace {

// crypto.getRandomValues' QuotaExceededError bound; globals.js checks it first with the web's
// error, this is the native's own guard.
constexpr duk_size_t MAX_RANDOM_FILL = 65536;

duk_ret_t NativeRandomFill(duk_context* ctx) {
    duk_size_t size = 0;
    void* data = duk_require_buffer_data(ctx, 0, &size);
    if (size > MAX_RANDOM_FILL) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "random fill above 65536 bytes");
    auto* out = static_cast<unsigned char*>(data);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::getrandom(out + done, size - done, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return duk_error(ctx, DUK_ERR_ERROR, "getrandom failed");
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

// TextEncoder.encode: the string's well-formed UTF-8 as a new Uint8Array (the package's own
// encoder, in Duktape, took seconds for a 44 KB JSON-RPC answer).
duk_ret_t NativeUtf8Encode(duk_context* ctx) {
    duk_size_t len = 0;
    const char* text = duk_to_lstring(ctx, 0, &len);
    const std::string utf8 = WellFormedUtf8(text, len);
    void* data = duk_push_fixed_buffer(ctx, utf8.size());
    if (!utf8.empty()) std::memcpy(data, utf8.data(), utf8.size());
    duk_push_buffer_object(ctx, -1, 0, utf8.size(), DUK_BUFOBJ_UINT8ARRAY);
    return 1;
}

// Appends code point `cp` as Duktape keeps strings: UTF-8 up to U+FFFF, and above it a UTF-16
// surrogate pair, each surrogate in its 3-byte form, so .length and charCodeAt answer as in V8.
void AppendCodeUnits(std::string& out, unsigned cp) {
    auto three = [&out](unsigned u) {
        out += static_cast<char>(0xE0 | (u >> 12));
        out += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (u & 0x3F));
    };
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        three(cp);
    } else {
        cp -= 0x10000;
        three(0xD800 | (cp >> 10));
        three(0xDC00 | (cp & 0x3FF));
    }
}

// TextDecoder.decode for whole input (not streamed): the Encoding Standard's UTF-8 decoder, one
// U+FFFD per maximal invalid subpart, or TypeError when `fatal`; a leading BOM dropped unless
// `ignoreBOM`. Arguments: a buffer object (Uint8Array, ArrayBuffer view), fatal, ignoreBOM.
duk_ret_t NativeUtf8Decode(duk_context* ctx) {
    duk_size_t size = 0;
    const auto* in = static_cast<const unsigned char*>(duk_require_buffer_data(ctx, 0, &size));
    const bool fatal = duk_to_boolean(ctx, 1) != 0;
    const bool ignore_bom = duk_to_boolean(ctx, 2) != 0;
    std::string out;
    out.reserve(size);
    unsigned cp = 0, seen = 0, needed = 0, lower = 0x80, upper = 0xBF;
    bool error = false;
    for (std::size_t i = 0; i <= size;) {
        if (i == size) {
            if (needed != 0) error = true, needed = 0;
            if (error) {
                if (fatal) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "The encoded data was not valid for encoding utf-8");
                AppendCodeUnits(out, 0xFFFD);
            }
            break;
        }
        if (error) {
            if (fatal) return duk_error(ctx, DUK_ERR_TYPE_ERROR, "The encoded data was not valid for encoding utf-8");
            AppendCodeUnits(out, 0xFFFD);
            error = false;
        }
        const unsigned b = in[i];
        if (needed == 0) {
            ++i;
            if (b < 0x80) {
                out += static_cast<char>(b);
            } else if (b >= 0xC2 && b <= 0xDF) {
                needed = 1, cp = b & 0x1F;
            } else if (b >= 0xE0 && b <= 0xEF) {
                if (b == 0xE0) lower = 0xA0;
                if (b == 0xED) upper = 0x9F;
                needed = 2, cp = b & 0x0F;
            } else if (b >= 0xF0 && b <= 0xF4) {
                if (b == 0xF0) lower = 0x90;
                if (b == 0xF4) upper = 0x8F;
                needed = 3, cp = b & 0x07;
            } else {
                error = true;
            }
            continue;
        }
        if (b < lower || b > upper) {
            // The byte starts over (it is not consumed) after the error for what came before.
            cp = seen = needed = 0, lower = 0x80, upper = 0xBF;
            error = true;
            continue;
        }
        ++i;
        lower = 0x80, upper = 0xBF;
        cp = (cp << 6) | (b & 0x3F);
        if (++seen != needed) continue;
        AppendCodeUnits(out, cp);
        cp = seen = needed = 0;
    }
    const std::size_t skip = !ignore_bom && out.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    duk_push_lstring(ctx, out.data() + skip, out.size() - skip);
    return 1;
}

}  // namespace

// Duktape keeps a string built from UTF-16 surrogates (String.fromCharCode, TextDecoder, JSON
// escapes) as one 3-byte sequence per surrogate (CESU-8), which is not UTF-8: text leaving the
// run gets each pair as its 4-byte UTF-8 form and a lone surrogate as U+FFFD, as V8 writes them
// to UTF-8.
std::string WellFormedUtf8(const char* text, std::size_t len) {
    std::string out;
    out.reserve(len);
    auto surrogate = [&](std::size_t i, unsigned char lo, unsigned char hi) {
        return i + 2 < len && static_cast<unsigned char>(text[i]) == 0xED &&
               static_cast<unsigned char>(text[i + 1]) >= lo && static_cast<unsigned char>(text[i + 1]) <= hi &&
               (static_cast<unsigned char>(text[i + 2]) & 0xC0) == 0x80;
    };
    auto unit = [&](std::size_t i) {
        return 0xD000u | ((static_cast<unsigned>(text[i + 1]) & 0x3Fu) << 6) | (static_cast<unsigned>(text[i + 2]) & 0x3Fu);
    };
    for (std::size_t i = 0; i < len;) {
        if (surrogate(i, 0xA0, 0xAF) && surrogate(i + 3, 0xB0, 0xBF)) {
            const unsigned cp = 0x10000u + ((unit(i) - 0xD800u) << 10) + (unit(i + 3) - 0xDC00u);
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
            i += 6;
        } else if (surrogate(i, 0xA0, 0xBF)) {
            out += "\xEF\xBF\xBD";
            i += 3;
        } else {
            out += text[i++];
        }
    }
    return out;
}

// String.prototype.normalize's implementation, loaded on first use: evaluates unorm.js (npm, with
// its Unicode tables) inside a function whose `this` is a fresh object, where its IIFE leaves
// `unorm` (String.prototype.normalize already exists, so it installs no shim of its own), and
// answers that object ({nfc, nfd, nfkc, nfkd}). About 140 KB of source: only runs that normalize
// non-ASCII text pay for compiling it.
duk_ret_t NativeLoadUnorm(duk_context* ctx) {
    std::string text = "(function () {\n";
    text.append(reinterpret_cast<const char*>(embedded::UNORM_JS), embedded::UNORM_JS_SIZE);
    text += "\nreturn this.unorm;\n})";
    duk_eval_lstring(ctx, text.data(), text.size());
    duk_push_object(ctx);
    duk_call_method(ctx, 0);
    return 1;
}

void InstallWebGlobalsNatives(duk_context* ctx) {
    duk_push_c_function(ctx, NativeLoadUnorm, 0);
    duk_put_global_string(ctx, "__sigil_unorm");
    duk_push_c_function(ctx, NativeRandomFill, 1);
    duk_put_global_string(ctx, "__sigil_random_fill");
    duk_push_c_function(ctx, NativeUtf8Encode, 1);
    duk_put_global_string(ctx, "__sigil_utf8_encode");
    duk_push_c_function(ctx, NativeUtf8Decode, 3);
    duk_put_global_string(ctx, "__sigil_utf8_decode");
    InstallRegExpUnicodeNatives(ctx);
}

std::string_view WebGlobalsSource() {
    static const std::string source =
        std::string(reinterpret_cast<const char*>(embedded::WEB_GLOBALS_JS), embedded::WEB_GLOBALS_JS_SIZE) + "\n" +
        std::string(reinterpret_cast<const char*>(embedded::SUBTLE_JS), embedded::SUBTLE_JS_SIZE) + "\n" +
        std::string(reinterpret_cast<const char*>(embedded::REGEXP_JS), embedded::REGEXP_JS_SIZE);
    return source;
}

std::string_view WebPackagesSource() {
    return {reinterpret_cast<const char*>(embedded::WEB_PACKAGES_JS), embedded::WEB_PACKAGES_JS_SIZE};
}

}  // namespace sigil::workers
