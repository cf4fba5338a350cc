// Sandbox op channel: the sans-IO message codec between a worker and its sandbox child.
//
// Wire format (one socketpair per run, stream socket), common/ipc_frame's with larger caps:
//   frame   = length:u32 big-endian || payload[length]        1 <= length <= cap
//   payload = type:u8 || field*
//   field   = size:u32 big-endian || bytes[size]
// Integers travel as 8-byte big-endian fields, booleans as 1-byte fields holding 0 or 1.
// Each message type has a fixed field list; a missing, extra or wrongly sized field, an unknown
// type or a boolean other than 0/1 makes the message malformed.
//
// Messages:
//   RUN{code, params_json, time_ms, memory_bytes, lower, cid, caller_json, count, (module_cid,
//       module_code, module_lower) * count}              worker -> child, first and once
//     lower: the code is the action's source and must be lowered to ES5.1 first; false when
//     it is the lowered text the worker cached from an earlier run. cid: the action's CID, which
//     the script reads in Lit.Auth.actionIpfsIdStack ("" when the worker gives none). caller_json:
//     who called the run, {apiKeyHash, accountHash, clientAddress}, from the worker's authentication
//     of the request (never from its body), answered by Sigil.Actions.caller() ("" for none).
//     count (at most SANDBOX_MAX_MODULES) modules imported by CID (workers/actions/imports.h),
//     each its CID, its code and whether that is source to lower as a module.
//   LOWERED{code}                                        child -> worker, after lowering and
//     before any of the action's own code runs (so the action cannot forge it); at most once
//   MODULE_LOWERED{cid, code}                            child -> worker, likewise, at most once
//     for each module RUN sent as source
//   OP{name, args_json}                                  child -> worker, blocks for OP_RESULT
//   OP_RESULT{ok, value}  value = JSON when ok, else an error message   worker -> child
//   LOG{text}                                            child -> worker
//   DONE{ok, response_json, code, message, stack}        child -> worker, last
//     ok: response_json is the JSON of main's return value ("" when it returned undefined);
//     !ok: code/message/stack describe the thrown error (response_json is "").
//
// Everything the child sends is untrusted: the worker decodes it with the smaller
// SANDBOX_MAX_CHILD_PAYLOAD cap, checked from the header before anything is buffered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/bytes.h"
#include "common/ipc_frame.h"
#include "common/result.h"

namespace sigil::workers {

// How a child that did not finish normally tells the worker why: its exit status, which the
// zygote reports. Only our native code picks these (the allocator, the timeout hook, channel
// failures), never a script; the worker still reads a signal (SIGXCPU, SIGKILL, SIGSYS) as the
// stronger evidence.
constexpr int SANDBOX_EXIT_OK = 0;               // DONE was sent
constexpr int SANDBOX_EXIT_CHANNEL_LOST = 120;   // the worker went away or spoke nonsense
constexpr int SANDBOX_EXIT_SETUP_FAILED = 121;   // rlimits, seccomp or heap creation failed
constexpr int SANDBOX_EXIT_ENGINE_FATAL = 122;   // Duktape's fatal handler ran
constexpr int SANDBOX_EXIT_TIME_LIMIT = 124;     // the in-engine deadline passed
constexpr int SANDBOX_EXIT_MEMORY_LIMIT = 125;   // the counting allocator refused a request

constexpr std::size_t SANDBOX_HEADER_SIZE = 4;
// Modules one run may import (transitively), and their total size as sent (source or lowered).
constexpr std::size_t SANDBOX_MAX_MODULES = 64;
constexpr std::size_t SANDBOX_MAX_MODULE_BYTES = 8u * 1024 * 1024;
// Cap for frames the worker sends (RUN carries up to 16 MiB of code plus params, and up to
// SANDBOX_MAX_MODULE_BYTES of modules with a little framing each).
constexpr std::size_t SANDBOX_MAX_PAYLOAD = 17 * 1024 * 1024 + SANDBOX_MAX_MODULE_BYTES + 64 * 1024;
// Cap for frames the child sends (OP args, LOG text, DONE response): far above the response and
// log limits, so those limits are reported as such and never as a framing error.
constexpr std::size_t SANDBOX_MAX_CHILD_PAYLOAD = 2 * 1024 * 1024;

enum class SandboxMessageType : std::uint8_t {
    Run = 1,
    Op = 2,
    OpResult = 3,
    Log = 4,
    Done = 5,
    Lowered = 6,
    ModuleLowered = 7,
};

// A module imported by CID (`import x from "ipfs://<cid>"`), as RUN carries it.
struct SandboxModule {
    std::string cid;
    std::string code;
    bool lower = false;  // source to lower as a module; false: its lowered text
};

struct SandboxRun {
    std::string code;
    std::string params_json;
    std::uint64_t time_ms = 0;
    std::uint64_t memory_bytes = 0;
    bool lower = false;
    std::string cid;
    std::string caller_json;  // Sigil.Actions.caller()'s answer, as JSON ("" when the worker gives none)
    std::vector<SandboxModule> modules;
};

struct SandboxLowered {
    std::string code;
};

struct SandboxModuleLowered {
    std::string cid;
    std::string code;
};

struct SandboxOp {
    std::string name;
    std::string args_json;
};

struct SandboxOpResult {
    bool ok = false;
    std::string value;  // JSON when ok, else a human error message
};

struct SandboxLog {
    std::string text;
};

// A JavaScript error as the child saw it.
struct ScriptError {
    std::string code;     // the error's name, e.g. "TypeError"
    std::string message;
    std::string stack;
};

struct SandboxDone {
    bool ok = false;
    std::string response_json;
    ScriptError error;
};

using SandboxMessage =
    std::variant<SandboxRun, SandboxOp, SandboxOpResult, SandboxLog, SandboxDone, SandboxLowered,
                 SandboxModuleLowered>;

// Encode one message as a complete frame (header included).
// Errors: TooLarge "frame_too_large" when the payload would exceed max_payload.
common::Result<common::Bytes> EncodeSandboxMessage(const SandboxMessage& message,
                                                   std::size_t max_payload = SANDBOX_MAX_PAYLOAD);

// Decode one payload (the bytes after the 4-byte header).
// Errors: InvalidInput "malformed_message" (empty payload, unknown type, wrong field list,
// a boolean other than 0/1).
common::Result<SandboxMessage> DecodeSandboxPayload(common::ByteView payload);

// Splits a byte stream into messages (common/ipc_frame's growing FrameDecoder). The length
// header is checked as soon as its 4 bytes arrive, so an oversized frame is refused before its
// payload is buffered.
// Loop: Feed(bytes read); then call Next() until it yields nullopt.
class SandboxFrameReader {
public:
    explicit SandboxFrameReader(std::size_t max_payload = SANDBOX_MAX_PAYLOAD)
        : m_decoder(common::FrameDecoder::Growing(max_payload)) {}

    // Append received bytes. Errors (the reader stays failed; close the channel):
    //   TooLarge "frame_too_large" / InvalidInput "frame_empty" from a header.
    common::Status Feed(common::ByteView data);

    // The next complete message, nullopt when more bytes are needed.
    // Errors: those of Feed, and InvalidInput "malformed_message" from DecodeSandboxPayload.
    common::Result<std::optional<SandboxMessage>> Next();

    // Bytes buffered that are not a complete frame yet (non-zero at EOF = truncated frame).
    std::size_t Pending() const { return m_decoder.Pending(); }

private:
    common::FrameDecoder m_decoder;
    std::optional<common::Error> m_failed;  // a frame that did not decode
};

}  // namespace sigil::workers
