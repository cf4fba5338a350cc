#include "workers/sandbox/web_globals.h"

#include <cerrno>
#include <cstddef>

#include <sys/random.h>

namespace sigil::workers {

namespace embedded {
extern const unsigned char WEB_GLOBALS_JS[];
extern const std::size_t WEB_GLOBALS_JS_SIZE;
extern const unsigned char WEB_PACKAGES_JS[];
extern const std::size_t WEB_PACKAGES_JS_SIZE;
}  // namespace embedded

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

}  // namespace

void InstallWebGlobalsNatives(duk_context* ctx) {
    duk_push_c_function(ctx, NativeRandomFill, 1);
    duk_put_global_string(ctx, "__sigil_random_fill");
}

std::string_view WebGlobalsSource() {
    return {reinterpret_cast<const char*>(embedded::WEB_GLOBALS_JS), embedded::WEB_GLOBALS_JS_SIZE};
}

std::string_view WebPackagesSource() {
    return {reinterpret_cast<const char*>(embedded::WEB_PACKAGES_JS), embedded::WEB_PACKAGES_JS_SIZE};
}

}  // namespace sigil::workers
