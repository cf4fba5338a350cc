// Where keyd's 32-byte root key comes from: a development key file here, or (production) the TEE
// key service (keyd/tee_key_source.h).
#pragma once

#include <string>

#include "common/result.h"
#include "common/secret.h"

namespace sigil::keyd {

// A source of the root key. keyd asks once at startup and keeps the key in locked memory.
class KeySource {
public:
    virtual ~KeySource() = default;
    // The root key, exactly 32 bytes (common::ROOT_KEY_SIZE).
    virtual common::Result<common::SecretBytes> LoadRootKey() = 0;
    // One line for the startup log (a path or service name; never key material).
    virtual std::string Describe() const = 0;
};

// Development key file.
//  * Missing: created with 32 bytes from RAND_bytes, mode 0600, O_EXCL (so two keyd processes
//    racing on first start cannot both write it), then read back like an existing file.
//  * Existing: opened with O_NOFOLLOW and checked on the open descriptor (no check-then-use
//    race): a regular file, owned by keyd's effective uid, no group or other permission bits,
//    exactly 32 bytes. Anything else is refused rather than repaired, since a key that others
//    could read must be treated as leaked.
// Errors from LoadRootKey (all ErrorKind::Internal):
//   "root_key_unreadable"     open/read/create failed (the message has the path and errno text)
//   "root_key_insecure_mode"  group/world permission bits set, or not owned by us
//   "root_key_bad_size"       not exactly 32 bytes
//   "root_key_not_regular"    a directory, device, socket, ... or a symbolic link
class FileKeySource final : public KeySource {
public:
    explicit FileKeySource(std::string path) : m_path(std::move(path)) {}
    common::Result<common::SecretBytes> LoadRootKey() override;
    std::string Describe() const override { return "key file " + m_path; }

private:
    common::Status CreateIfMissing() const;
    std::string m_path;
};

// Production: TeeKeySource (keyd/tee_key_source.h), the TEE key service.

}  // namespace sigil::keyd
