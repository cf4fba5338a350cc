// The one configuration file of every Sigil component: strict INI parsing against a schema table.
//
// Format: `[section]` headers, `key = value` lines, `#` starts a comment line (whole lines only, so
// a value may contain '#'), blank lines ignored, surrounding whitespace trimmed, values are taken
// verbatim (no quotes, no escapes). Strict: an unknown section or key, a key repeated in one
// section, a key before any section, a line that is neither of the above, or a value of the
// wrong type or out of range is refused, with a message naming the line and `section.key`.
//
// Every key is one row of the schema table in config.cpp (ConfigSchema()); a component that needs
// a new key adds one row there and one documented line to sigil.conf.example at the repo root.
// Keys absent from the file take the row's default. Current keys and defaults:
//
//   [supervisor]
//   socket_path             = /run/sigil/fcgi.sock  FastCGI listen socket nginx connects to
//   socket_mode             = 0666                  octal permissions of the socket
//   socket_group            = (empty)               if set, chown the socket to this group
//   workers                 = 0                     worker processes; 0 = 2 x online CPUs, capped at 32
//   max_requests            = 100000                a worker exits after this many requests (recycling)
//   request_hard_timeout_s  = 60                    the master SIGKILLs a worker busy longer than this
//   graceful_stop_timeout_s = 10                    QUIT -> TERM after this, TERM -> KILL 2 s later
//   scoreboard_name         = sigil-scoreboard      name of the shared-memory scoreboard (memfd)
//   worker_binary           = (empty)               sigil-worker path; empty = next to sigil-supervisor
//   [worker]
//   max_body_bytes          = 1048576               largest request body accepted (else 413)
//   dstack_socket           = (empty)               dstack guest agent socket; empty = /attestation 503
//   attestation_timeout_ms  = 5000                  wait for the guest agent at most this long
//   attestation_cache_ms    = 60000                 reuse the nonce-less quote and the info this long
//   test_routes             = false                 adds /core/v1/test/* (integration tests only)
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sigil::common {

enum class ConfigType {
    String,  // any text (may be empty)
    Path,    // non-empty text without control characters; empty allowed only as the default
    Int,     // decimal integer within [min, max]
    Octal,   // octal integer within [min, max] (file modes: "0660")
    Bool,    // true/false/yes/no/on/off/1/0
};

// One row of the schema: a key that may appear in the file.
struct ConfigKey {
    std::string_view section;
    std::string_view key;
    ConfigType type;
    std::string_view default_value;  // as it would be written in the file
    std::int64_t min = 0;            // Int/Octal only
    std::int64_t max = 0;            // Int/Octal only
    std::string_view doc;            // one line, for sigil.conf.example and error messages
};

// The built-in schema table (every component's keys).
std::span<const ConfigKey> ConfigSchema();

// A parsed, validated configuration. Getters never fail for keys present in the schema it was
// parsed against; asking for a key not in the schema is a programming error and aborts.
class Config {
public:
    // Parses `text` against `schema`. Errors: InvalidInput "config_invalid" with a message like
    // "line 7: unknown key supervisor.wrokers". The schema's defaults are validated too, so a bad
    // default row is caught by the first parse (and by the unit tests).
    static Result<Config> Parse(std::string_view text, std::span<const ConfigKey> schema = ConfigSchema());

    // Reads and parses the file at `path`. Errors: InvalidInput "config_unreadable" (cannot open
    // or read; the message names the path and errno text) or "config_invalid" (see Parse).
    static Result<Config> LoadFile(const std::string& path, std::span<const ConfigKey> schema = ConfigSchema());

    // Reads the file's text without parsing it (so a caller can keep exactly what it validated).
    // Errors: InvalidInput "config_unreadable" naming the path.
    static Result<std::string> ReadText(const std::string& path);

    // A configuration with every default (as if parsing an empty file).
    static Config Defaults(std::span<const ConfigKey> schema = ConfigSchema());

    std::string GetString(std::string_view section, std::string_view key) const;  // String, Path
    std::int64_t GetInt(std::string_view section, std::string_view key) const;     // Int, Octal
    bool GetBool(std::string_view section, std::string_view key) const;           // Bool

    // True iff the key was written in the file (rather than taken from the default).
    bool IsSet(std::string_view section, std::string_view key) const;

private:
    struct Value {
        std::string text;
        std::int64_t number = 0;
        bool set = false;
    };
    const Value& Find(std::string_view section, std::string_view key, ConfigType want_a, ConfigType want_b) const;
    std::span<const ConfigKey> m_schema;
    std::map<std::string, Value, std::less<>> m_values;  // "section.key" -> value
};

}  // namespace sigil::common
