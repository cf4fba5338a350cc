// Idempotency-Key on authenticated writes and runs (DESIGN.md section 9): the first answer is kept with
// the ledger for 24 h and replayed to the same credential, sealed so that nobody else can read it.
#pragma once

#include "workers/billing/billing.h"
#include "workers/chain/service.h"
#include "workers/http/router.h"

namespace sigil::workers {

// Wraps an authenticated POST. A request without the header passes through. With one (1..255
// printable characters, else 400 invalid_idempotency_key):
//  * Scope: the key hash of the credential that sent it, so another key of the same account (a
//    usage key with no scopes, say) never reaches the answer, even with the same header and body.
//  * The answer is stored sealed (AES-256-GCM) under a key derived by HKDF from the raw credential
//    and the scope: only a request carrying that credential can open it; the ledger's database
//    (SQLite file, PostgreSQL) never holds a minted key, a run's output or a private key in clear.
//  * Replay: the same key and body answer the stored status and body (Idempotent-Replayed: true),
//    neither executed nor charged again; another body is 422 idempotency_key_reused; one still
//    running is 409 idempotency_in_progress until its lease ([billing] idempotency_lease_ms, the
//    worker's hard timeout and a margin) ends, then the retry takes the claim over and runs.
//  * Not kept (the retry runs again): server failures (5xx) unless their transaction went out,
//    402 (no credit: a top-up must let the same key run) and 429 (overloaded).
//  * A write whose transaction was broadcast but not confirmed is followed on retry (pending: the
//    same answer; mined: completed from its receipt, or a minted 202 becomes its 200; reverted or
//    dropped: runs again, or 409).
//  * An account holds at most [billing] idempotency_keys_per_account answers at once: 429
//    idempotency_keys_exhausted beyond.
// `billing` null or without a database: 501 idempotency_not_supported for a request with the header.
Handler Idempotent(Service& service, billing::Billing* billing, Handler inner);

}  // namespace sigil::workers
