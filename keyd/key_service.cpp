#include "keyd/key_service.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "common/eth_tx.h"
#include "common/hex.h"
#include "common/keccak.h"
#include "common/key_derivation.h"
#include "common/log.h"
#include "common/random.h"
#include "common/secp256k1.h"
#include "keyd/receipt_protocol.h"
#include "keyd/relay_policy.h"

namespace sigil::keyd {
namespace {

using common::ByteView;
using common::SecretBuffer;

bool IsZero(ByteView v) {
    return std::all_of(v.begin(), v.end(), [](std::uint8_t b) { return b == 0; });
}

// A decode error becomes the matching Failure reply.
SecretBuffer DecodeFailure(const common::Error& e) {
    const KeydFailure code = e.code == "malformed_message" ? KeydFailure::MalformedRequest : KeydFailure::InvalidInput;
    return keyd::EncodeFailureReply(code, e.message);
}

SecretBuffer Refuse(KeydFailure code, std::string_view what) {
    common::LogWarn("refused: " + std::string(what));
    return keyd::EncodeFailureReply(code, what);
}

SecretBuffer InternalFailure(const common::Error& e) {
    common::LogError("internal error: " + e.code + ": " + e.message);
    return keyd::EncodeFailureReply(KeydFailure::Internal, e.code);
}

// The public half of a derived secp256k1 key.
common::Result<keyd::PublicKeyInfo> PublicInfo(const common::SecretBytes& secret) {
    auto key = common::PrivateKey::FromBytes(secret.view());
    if (!key.ok()) return key.error();
    const common::PublicKey pub = key->PublicKey();
    return keyd::PublicKeyInfo{pub.Address(), pub.Uncompressed()};
}

common::Result<common::Address20> AddressOf(common::Result<common::SecretBytes> secret) {
    if (!secret.ok()) return secret.error();
    auto info = PublicInfo(*secret);
    if (!info.ok()) return info.error();
    return info->address;
}

}  // namespace

common::Result<KeyService> KeyService::Create(common::SecretBytes root, const KeyPolicy& policy) {
    if (root.size() != common::ROOT_KEY_SIZE) {
        return common::MakeError(common::ErrorKind::Internal, "invalid_root_key", "root key must be 32 bytes");
    }
    if (policy.chain_id == 0 || IsZero(policy.contract) || policy.payer_count > keyd::IPC_MAX_PAYERS ||
        policy.max_fee_per_gas == 0 || policy.max_gas_limit == 0) {
        return common::MakeError(common::ErrorKind::InvalidInput, "invalid_policy",
                                 "chain id must be non-zero, the contract address set, at most 1024 payers");
    }
    KeyService service(std::move(root), policy);
    // Payer addresses are public and asked for often: derive them once.
    auto admin = AddressOf(common::DeriveAdminPayerKey(service.m_root));
    if (!admin.ok()) return admin.error();
    service.m_admin_payer = *admin;
    for (std::uint32_t i = 0; i < policy.payer_count; ++i) {
        auto payer = AddressOf(common::DerivePayerKey(service.m_root, i));
        if (!payer.ok()) return payer.error();
        service.m_payers.push_back(*payer);
    }
    auto receipt_key = common::DeriveReceiptKey(service.m_root);
    if (!receipt_key.ok()) return receipt_key.error();
    auto receipt_public = PublicInfo(*receipt_key);
    if (!receipt_public.ok()) return receipt_public.error();
    service.m_receipt_key = std::move(receipt_key).value();
    service.m_receipt_public = *receipt_public;
    return service;
}

const KeyService::Dispatch* KeyService::Lookup(std::uint8_t type) {
    // Every request keyd answers; anything else is UnknownRequest. keyd has no session state,
    // so every entry is legal at any time.
    static const Dispatch TABLE[] = {
        {KeydMessage::Ping, "ping", &KeyService::HandlePing},
        {KeydMessage::MintPath, "mint_path", &KeyService::HandleMintPath},
        {KeydMessage::GetPkpPublic, "get_pkp_public", &KeyService::HandleGetPkpPublic},
        {KeydMessage::GetPkpKeys, "get_pkp_keys", &KeyService::HandleGetPkpKeys},
        {KeydMessage::GetActionKey, "get_action_key", &KeyService::HandleGetActionKey},
        {KeydMessage::GetActionPublic, "get_action_public", &KeyService::HandleGetActionPublic},
        {KeydMessage::GetPayers, "get_payers", &KeyService::HandleGetPayers},
        {KeydMessage::SignPayerTx, "sign_payer_tx", &KeyService::HandleSignPayerTx},
        {static_cast<KeydMessage>(keyd::IPC_SIGN_RECEIPT), "sign_receipt", &KeyService::HandleSignReceipt},
        {static_cast<KeydMessage>(keyd::IPC_GET_RECEIPT_PUBLIC), "get_receipt_public",
         &KeyService::HandleGetReceiptPublic},
    };
    for (const Dispatch& d : TABLE) {
        if (static_cast<std::uint8_t>(d.type) == type) return &d;
    }
    return nullptr;
}

SecretBuffer KeyService::Handle(ByteView payload) {
    if (payload.empty()) return keyd::EncodeFailureReply(KeydFailure::MalformedRequest, "empty message");
    const Dispatch* d = Lookup(payload[0]);
    if (d == nullptr) {
        return Refuse(KeydFailure::UnknownRequest, "unknown request type " + std::to_string(payload[0]));
    }
    common::LogDebug("request " + std::string(d->name));
    return (this->*(d->handler))(payload);
}

SecretBuffer KeyService::HandlePing(ByteView payload) {
    auto ok = keyd::DecodeEmptyRequest(payload);
    if (!ok.ok()) return DecodeFailure(ok.error());
    return keyd::EncodePongReply();
}

SecretBuffer KeyService::HandleMintPath(ByteView payload) {
    auto ok = keyd::DecodeEmptyRequest(payload);
    if (!ok.ok()) return DecodeFailure(ok.error());
    common::Hash32 path{};
    // The contract refuses path 0; a zero draw (probability 2^-256) is simply drawn again.
    do {
        const common::SecretBytes fresh = common::RandomSecret(path.size());
        std::memcpy(path.data(), fresh.data(), path.size());
    } while (IsZero(path));
    return keyd::EncodePathReply(path);
}

SecretBuffer KeyService::HandleGetPkpPublic(ByteView payload) {
    auto ref = keyd::DecodePkpRequest(payload);
    if (!ref.ok()) return DecodeFailure(ref.error());
    // The account hash is what binds a path to one account: without it there is no key.
    if (IsZero(ref->account_hash) || IsZero(ref->path)) {
        return Refuse(KeydFailure::InvalidInput, "zero account hash or derivation path");
    }
    auto secret = common::DerivePkpSigningKey(m_root, ref->account_hash, ref->path);
    if (!secret.ok()) return InternalFailure(secret.error());
    auto info = PublicInfo(*secret);
    if (!info.ok()) return InternalFailure(info.error());
    return keyd::EncodePublicKeyReply(*info);
}

SecretBuffer KeyService::HandleGetPkpKeys(ByteView payload) {
    auto ref = keyd::DecodePkpRequest(payload);
    if (!ref.ok()) return DecodeFailure(ref.error());
    if (IsZero(ref->account_hash) || IsZero(ref->path)) {
        return Refuse(KeydFailure::InvalidInput, "zero account hash or derivation path");
    }
    auto signing = common::DerivePkpSigningKey(m_root, ref->account_hash, ref->path);
    if (!signing.ok()) return InternalFailure(signing.error());
    auto encryption = common::DerivePkpEncryptionKey(m_root, ref->account_hash, ref->path);
    if (!encryption.ok()) return InternalFailure(encryption.error());
    return keyd::EncodePkpKeysReply(*signing, *encryption);
}

SecretBuffer KeyService::HandleGetActionKey(ByteView payload) {
    auto cid = keyd::DecodeActionRequest(payload);
    if (!cid.ok()) return DecodeFailure(cid.error());
    auto secret = common::DeriveActionKey(m_root, *cid);
    if (!secret.ok()) return InternalFailure(secret.error());
    return keyd::EncodeSecretKeyReply(*secret);
}

SecretBuffer KeyService::HandleGetActionPublic(ByteView payload) {
    auto cid = keyd::DecodeActionRequest(payload);
    if (!cid.ok()) return DecodeFailure(cid.error());
    auto secret = common::DeriveActionKey(m_root, *cid);
    if (!secret.ok()) return InternalFailure(secret.error());
    auto info = PublicInfo(*secret);
    if (!info.ok()) return InternalFailure(info.error());
    return keyd::EncodePublicKeyReply(*info);
}

SecretBuffer KeyService::HandleGetPayers(ByteView payload) {
    auto count = keyd::DecodeGetPayersRequest(payload);
    if (!count.ok()) return DecodeFailure(count.error());
    if (*count > m_payers.size()) {
        return Refuse(KeydFailure::OutOfRange, "asked for " + std::to_string(*count) + " payers, " +
                                                   std::to_string(m_payers.size()) + " configured");
    }
    keyd::PayerList list;
    list.admin = m_admin_payer;
    list.payers.assign(m_payers.begin(), m_payers.begin() + static_cast<std::ptrdiff_t>(*count));
    return keyd::EncodePayersReply(list);
}

SecretBuffer KeyService::HandleSignPayerTx(ByteView payload) {
    auto req = keyd::DecodeSignPayerTxRequest(payload);
    if (!req.ok()) return DecodeFailure(req.error());
    // The payer wallets exist to relay writes to AccountConfig on one chain, nothing else: a
    // compromised worker must not be able to drain them elsewhere or deploy contracts.
    if (!req->to) return Refuse(KeydFailure::Refused, "contract creation is never signed");
    if (*req->to != m_policy.contract) {
        return Refuse(KeydFailure::Refused, "recipient " + common::HexEncode(*req->to, true) +
                                                " is not the AccountConfig contract");
    }
    if (req->chain_id != m_policy.chain_id) {
        return Refuse(KeydFailure::Refused, "chain id " + std::to_string(req->chain_id) + " is not " +
                                                std::to_string(m_policy.chain_id));
    }
    // Fees and gas within the caps, so no request can spend more than gas_limit x max_fee_per_gas.
    if (req->max_fee_per_gas > m_policy.max_fee_per_gas) {
        return Refuse(KeydFailure::Refused, "max fee per gas " + std::to_string(req->max_fee_per_gas) +
                                                " wei is over the cap of " + std::to_string(m_policy.max_fee_per_gas));
    }
    if (req->max_priority_fee_per_gas > m_policy.max_priority_fee_per_gas ||
        req->max_priority_fee_per_gas > req->max_fee_per_gas) {
        return Refuse(KeydFailure::Refused, "priority fee " + std::to_string(req->max_priority_fee_per_gas) +
                                                " wei is over the cap of " +
                                                std::to_string(m_policy.max_priority_fee_per_gas) + " or the max fee");
    }
    if (req->gas_limit > m_policy.max_gas_limit) {
        return Refuse(KeydFailure::Refused, "gas limit " + std::to_string(req->gas_limit) + " is over the cap of " +
                                                std::to_string(m_policy.max_gas_limit));
    }
    if (req->payer != keyd::IPC_ADMIN_PAYER && req->payer >= m_payers.size()) {
        return Refuse(KeydFailure::OutOfRange, "payer index " + std::to_string(req->payer) + " is not configured");
    }
    // Defense in depth against a compromised worker: only relayed calls, each for the API key that
    // came with it (and a conversion only with the new admin's own consent).
    if (auto relayed = CheckRelayedCall(req->data, req->api_key, req->consent, m_policy.chain_id, m_now());
        !relayed.ok()) {
        return Refuse(KeydFailure::Refused, relayed.error().message);
    }
    auto secret = req->payer == keyd::IPC_ADMIN_PAYER
                      ? common::DeriveAdminPayerKey(m_root)
                      : common::DerivePayerKey(m_root, static_cast<std::uint32_t>(req->payer));
    if (!secret.ok()) return InternalFailure(secret.error());
    auto key = common::PrivateKey::FromBytes(secret->view());
    if (!key.ok()) return InternalFailure(key.error());

    common::Eip1559Tx tx;
    tx.chain_id = req->chain_id;
    tx.nonce = req->nonce;
    tx.max_priority_fee_per_gas = common::Uint256::FromUint64(req->max_priority_fee_per_gas);
    tx.max_fee_per_gas = common::Uint256::FromUint64(req->max_fee_per_gas);
    tx.gas_limit = req->gas_limit;
    tx.to = req->to;
    tx.data = std::move(req->data);  // value stays 0: payers only pay gas
    const common::Signature65 sig = common::SignDigest(*key, common::SigningHash(tx));
    common::Hash32 r{}, s{};
    std::memcpy(r.data(), sig.data(), 32);
    std::memcpy(s.data(), sig.data() + 32, 32);
    auto raw = common::EncodeSigned(tx, sig[64], r, s);
    if (!raw.ok()) return InternalFailure(raw.error());
    auto reply = keyd::EncodeSignedTxReply(*raw);
    if (!reply.ok()) return Refuse(KeydFailure::InvalidInput, "signed transaction does not fit in one frame");
    return std::move(reply).value();
}

// Receipts ------------------------------------------------------------------------------------

SecretBuffer KeyService::HandleGetReceiptPublic(ByteView payload) {
    auto r = common::MessageReader::Open(payload);
    if (!r.ok() || r->Type() != keyd::IPC_GET_RECEIPT_PUBLIC || !r->Finish().ok()) {
        return keyd::EncodeFailureReply(KeydFailure::MalformedRequest, "malformed receipt public key request");
    }
    return keyd::EncodePublicKeyReply(m_receipt_public);
}

SecretBuffer KeyService::HandleSignReceipt(ByteView payload) {
    // The request carries the receipt's fields, never a digest: keyd builds the typed structure
    // itself under its own chain id and contract, so the receipt key can sign nothing but a receipt.
    auto req = keyd::DecodeSignReceiptRequest(payload);
    if (!req.ok()) return DecodeFailure(req.error());
    const std::int64_t now = m_now();
    const std::int64_t issued = static_cast<std::int64_t>(std::min<std::uint64_t>(
        req->fields.issued_at, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
    if (issued < now - RECEIPT_CLOCK_SKEW_S || issued > now + RECEIPT_CLOCK_SKEW_S) {
        return Refuse(KeydFailure::Refused, "receipt time " + std::to_string(req->fields.issued_at) +
                                                " is more than 300 s from keyd's clock");
    }
    // The key hash is the key's that came with the request: a worker signs receipts only for keys
    // it was shown, as for relayed writes.
    req->fields.api_key_hash = common::Keccak256Hash(req->api_key.view());
    const common::ReceiptDomain domain{m_policy.chain_id, m_policy.contract};
    auto digest = common::ReceiptDigest(domain, req->fields);
    if (!digest.ok()) return Refuse(KeydFailure::InvalidInput, digest.error().message);
    auto key = common::PrivateKey::FromBytes(m_receipt_key.view());
    if (!key.ok()) return InternalFailure(key.error());
    keyd::ReceiptSignature out;
    out.signature = common::SignDigest(*key, *digest);
    out.signature[64] = static_cast<std::uint8_t>(out.signature[64] + 27);  // as ethers' signTypedData
    out.api_key_hash = req->fields.api_key_hash;
    return keyd::EncodeReceiptSignatureReply(out);
}

}  // namespace sigil::keyd
