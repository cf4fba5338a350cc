// Fuzzes the config parser: any input is either refused with an error or yields a Config whose
// every schema key can be read back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace sigil::common;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto cfg = Config::Parse(text);
    if (!cfg.ok()) {
        if (cfg.error().code != "config_invalid" || cfg.error().message.empty()) __builtin_trap();
        return 0;
    }
    for (const auto& k : ConfigSchema()) {
        switch (k.type) {
            case ConfigType::String:
            case ConfigType::Path: (void)cfg->GetString(k.section, k.key); break;
            case ConfigType::Int:
            case ConfigType::Octal: {
                const auto v = cfg->GetInt(k.section, k.key);
                if (v < k.min || v > k.max) __builtin_trap();
                break;
            }
            case ConfigType::Bool: (void)cfg->GetBool(k.section, k.key); break;
        }
    }
    return 0;
}
