// The workers' client of sigil-keyd: one request at a time over the unix socket, with timeouts
// on every step and one reconnect when keyd restarted, so no request ever hangs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "common/handles.h"
#include "keyd/protocol.h"
#include "keyd/receipt_protocol.h"
#include "common/result.h"
#include "common/secret.h"

namespace sigil::workers {

struct KeydClientOptions {
    std::string socket_path;
    std::chrono::milliseconds connect_timeout{1000};
    // Budget for one request: sending it and receiving the whole reply (a reply that trickles in
    // cannot stretch it).
    std::chrono::milliseconds request_timeout{2000};
};

// Not thread-safe: each worker process owns one client.
// Every request connects on first use and keeps the connection. If keyd closed it (restart,
// idle timeout) the request reconnects once and is sent again: every keyd request is safe to
// repeat (derivations and RFC 6979 signatures are deterministic; a second MINT_PATH only draws
// another unregistered path).
// Errors common to every request:
//   Unavailable "keyd_unavailable"   cannot connect, the connection broke twice, or no complete
//                                    reply within request_timeout (the connection is dropped,
//                                    so a late reply can never answer the next request);
//   Internal "keyd_protocol_error"   keyd answered something that is not the expected reply;
//   keyd's own refusals as mapped by keyd::KeydFailureToError (e.g. Forbidden "keyd_refused").
class KeydClient {
public:
    explicit KeydClient(KeydClientOptions options);

    common::Status Ping();
    // keyd's own counters (STATS), for /metrics.
    common::Result<keyd::KeydStats> Stats();
    // A fresh random 32-byte derivation path (not yet registered anywhere).
    common::Result<common::Hash32> MintPath();
    // Public data of the PKP (account_hash, path): its address and uncompressed public key.
    common::Result<keyd::PublicKeyInfo> GetPkpPublic(const keyd::PkpRef& ref);
    // The PKP's signing and encryption secrets. Callers must have checked that `ref.path` is
    // registered to the account `ref.account_hash` (keyd binds keys to the hash, so another
    // account's hash yields unrelated keys, never the owner's).
    common::Result<keyd::PkpKeys> GetPkpKeys(const keyd::PkpRef& ref);
    // The action identity key of `cid` (1..128 characters of [A-Za-z0-9]).
    common::Result<common::SecretBytes> GetActionKey(std::string_view cid);
    common::Result<keyd::PublicKeyInfo> GetActionPublic(std::string_view cid);
    // The first `count` payer addresses and the admin payer address.
    common::Result<keyd::PayerList> GetPayers(std::uint32_t count);
    // The raw signed EIP-1559 transaction, ready for eth_sendRawTransaction. keyd refuses
    // (Forbidden "keyd_refused") any chain id or recipient other than its configured ones.
    common::Result<common::Bytes> SignPayerTx(const keyd::PayerTxRequest& tx);

    // A run receipt's signature by the deployment's receipt key over the typed structure keyd builds
    // from `request` (keyd/receipt_protocol.h). keyd refuses (Forbidden "keyd_refused") a time more
    // than 300 s from its clock.
    common::Result<keyd::ReceiptSignature> SignReceipt(const keyd::ReceiptSignRequest& request);
    // The receipt key's address and public key (public data: the evidence set publishes the address).
    common::Result<keyd::PublicKeyInfo> GetReceiptPublic();

    // Drop the connection (the next request reconnects).
    void Disconnect();
    bool Connected() const { return m_fd.valid(); }

private:
    // Sends `frame` and returns the reply payload (in wiping memory).
    common::Result<common::SecretBuffer> Call(const common::SecretBuffer& frame);
    // Call without its metrics (keyd's latency and transport failures, common/metrics.h).
    common::Result<common::SecretBuffer> CallUncounted(const common::SecretBuffer& frame);
    // One attempt on the current connection. *broken tells whether the failure was the
    // connection closing under us (worth one retry on a reused connection).
    common::Result<common::SecretBuffer> Exchange(const common::SecretBuffer& frame, bool* broken);
    common::Status Connect();

    KeydClientOptions m_options;
    common::UniqueFd m_fd;
};

}  // namespace sigil::workers
