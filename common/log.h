// Logging: one line per event to stderr (journald collects it), tagged with the request id.
// Never pass secrets or action responses to these functions.
#pragma once

#include <string_view>

namespace sigil::common {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

// Lines below `level` are dropped. Default Info; SIGIL_LOG_LEVEL=debug|info|warn|error overrides.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// True when a line at `level` would be written (skip building a message that would be dropped).
inline bool LogEnabled(LogLevel level) { return level >= GetLogLevel(); }

// Name printed in every line (e.g. "keyd", "worker[3]").
void SetLogComponent(std::string_view component);

// Writes "<level> <component> [req=<request_id>] <message>\n" in a single write(2), so lines
// from several processes never interleave. Control characters in `message` are escaped.
void Log(LogLevel level, std::string_view message, std::string_view request_id = {});

inline void LogInfo(std::string_view m, std::string_view rid = {}) { Log(LogLevel::Info, m, rid); }
inline void LogWarn(std::string_view m, std::string_view rid = {}) { Log(LogLevel::Warn, m, rid); }
inline void LogError(std::string_view m, std::string_view rid = {}) { Log(LogLevel::Error, m, rid); }
inline void LogDebug(std::string_view m, std::string_view rid = {}) { Log(LogLevel::Debug, m, rid); }

}  // namespace sigil::common
