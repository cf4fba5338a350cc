#include "workers/sandbox/natives/regexp_unicode.h"

#include <cstddef>
#include <string>

#include "workers/sandbox/embedded_scripts.h"

namespace sigil::workers {

namespace {

std::string_view View(const unsigned char* data, std::size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// A property path as unicode_properties.mjs writes them: letters, digits and _ in two parts.
bool IsPropertyPath(std::string_view path) {
    if (path.empty() || path.size() > 80) return false;
    std::size_t slashes = 0;
    for (char c : path) {
        if (c == '/') ++slashes;
        else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    return slashes == 1 && path.front() != '/' && path.back() != '/';
}

// The bundle ends by calling __sigil_modules_install(load) and reads __sigil_bundle_glue as a free
// name: both are this wrapper's, so nothing global is touched.
duk_ret_t NativeLoadRegexpu(duk_context* ctx) {
    std::string text =
        "(function (__sigil_bundle_glue) {\n"
        "var __sigil_loaded;\n"
        "var __sigil_modules_install = function (load) { __sigil_loaded = load; };\n";
    text.append(View(embedded::REGEXPU_JS, embedded::REGEXPU_JS_SIZE));
    text += "\nreturn __sigil_loaded;\n})";
    duk_eval_lstring(ctx, text.data(), text.size());
    duk_dup(ctx, 0);
    duk_call(ctx, 1);
    return 1;
}

duk_ret_t NativeLoadUnicodeProperty(duk_context* ctx) {
    const std::string_view module = UnicodePropertySource(duk_require_string(ctx, 0));
    if (module.empty()) return 0;
    std::string text = "(function (module, exports, require) {\n";
    text.append(module);
    text += "\n})";
    duk_eval_lstring(ctx, text.data(), text.size());
    return 1;
}

}  // namespace

std::string_view UnicodePropertySource(std::string_view path) {
    if (!IsPropertyPath(path)) return {};
    const std::string_view all = View(embedded::UNICODE_PROPERTIES_JS, embedded::UNICODE_PROPERTIES_JS_SIZE);
    const std::string marker = "\n//# " + std::string(path) + "\n";
    const std::size_t at = all.find(marker);
    if (at == std::string_view::npos) return {};
    const std::size_t start = at + marker.size();
    const std::size_t end = all.find("\n//# ", start);
    return all.substr(start, (end == std::string_view::npos ? all.size() : end) - start);
}

void InstallRegExpUnicodeNatives(duk_context* ctx) {
    duk_push_c_function(ctx, NativeLoadRegexpu, 1);
    duk_put_global_string(ctx, "__sigil_regexpu");
    duk_push_c_function(ctx, NativeLoadUnicodeProperty, 1);
    duk_put_global_string(ctx, "__sigil_unicode_property");
}

}  // namespace sigil::workers
