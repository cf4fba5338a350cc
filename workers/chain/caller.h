// Who is calling: an API key resolved on chain to its account (the contract's resolveKey).
#pragma once

#include "common/uint256.h"

namespace sigil::workers {

// RequestContext::auth holds one of these for authenticated routes; runs carry it into every op.
struct Caller {
    common::Uint256 key_hash;      // keccak256(utf8(api key))
    common::Uint256 account_hash;  // the account the key belongs to
    bool is_owner = false;         // the account (master) key
};

}  // namespace sigil::workers
