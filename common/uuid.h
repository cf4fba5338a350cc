// Random (version 4) UUIDs, RFC 9562 / RFC 4122, for ids this service mints.
#pragma once

#include <string>
#include <string_view>

namespace sigil::common {

// A new version 4 UUID from RAND_bytes: 122 random bits, version nibble 4, variant bits 10,
// as 36 lowercase characters 8-4-4-4-12, e.g. "3f2c8a1e-9b4d-4c7e-a1f0-5d6e7b8c9a0b".
// Never fails (aborts if the random generator fails, see common/random.h).
std::string NewUuidV4();

// True iff `text` is a UUID in the canonical form this service emits: exactly 36 characters,
// '-' at offsets 8, 13, 18 and 23 and lowercase hex digits elsewhere. Any version and variant
// are accepted. Uppercase is refused so that one id cannot have two spellings.
bool IsUuid(std::string_view text);

}  // namespace sigil::common
