#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sigil::common {
namespace {

LogLevel InitialLevel() {
    const char* env = std::getenv("SIGIL_LOG_LEVEL");
    if (env == nullptr) return LogLevel::Info;
    if (std::strcmp(env, "debug") == 0) return LogLevel::Debug;
    if (std::strcmp(env, "warn") == 0) return LogLevel::Warn;
    if (std::strcmp(env, "error") == 0) return LogLevel::Error;
    return LogLevel::Info;
}

std::atomic<int> g_level{static_cast<int>(InitialLevel())};
std::string g_component = "sigil";

const char* LevelName(LogLevel l) {
    switch (l) {
        case LogLevel::Debug: return "debug";
        case LogLevel::Info: return "info";
        case LogLevel::Warn: return "warn";
        case LogLevel::Error: return "error";
    }
    return "info";
}

void AppendEscaped(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char c : s) {
        if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }
void SetLogComponent(std::string_view component) { g_component = std::string(component); }

void Log(LogLevel level, std::string_view message, std::string_view request_id) {
    if (static_cast<int>(level) < g_level.load()) return;
    std::string line;
    line.reserve(message.size() + 64);
    line += LevelName(level);
    line += ' ';
    line += g_component;
    if (!request_id.empty()) {
        line += " [req=";
        AppendEscaped(line, request_id);
        line += ']';
    }
    line += ' ';
    AppendEscaped(line, message);
    line += '\n';
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n <= 0) return;  // nowhere else to report a failing stderr
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

}  // namespace sigil::common
