#include "workers/api/idempotency.h"

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "common/aes_gcm.h"
#include "common/hex.h"
#include "common/hkdf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/sha256.h"
#include "workers/api/api.h"
#include "workers/api/auth.h"

namespace sigil::workers {
namespace {

using common::ErrorKind;
using common::MakeError;
using common::Result;

constexpr std::size_t MAX_IDEMPOTENCY_KEY_BYTES = 255;
constexpr std::string_view ANSWER_KEY_SALT = "sigil/idempotency-answer/v1";

bool ValidIdempotencyKey(const std::string& key) {
    if (key.empty() || key.size() > MAX_IDEMPOTENCY_KEY_BYTES) return false;
    for (unsigned char c : key) {
        if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
}

common::ByteView View(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

// One Idempotency-Key of one credential: where its answer lives and the key that seals it.
struct AnswerSlot {
    std::string scope;  // "v2:" + sha256 hex of (key hash, Idempotency-Key): fixed length, nothing to split on
    common::SecretBytes seal_key;

    Result<std::string> Seal(const std::string& body) const { return common::EncryptToHex(seal_key, View(body)); }
    // A stored answer this credential sealed. Anything else (tampered, or sealed by a key that is no
    // longer this one: impossible while the scope names the key hash) is refused, never replayed.
    Result<std::string> Open(const std::string& sealed) const {
        auto plain = common::DecryptFromHex(seal_key, sealed);
        if (!plain.ok()) {
            return MakeError(ErrorKind::Internal, "idempotency_answer_unreadable",
                             "the answer stored for this Idempotency-Key cannot be opened; use a new key");
        }
        return std::string(plain->text());
    }
};

// The scope names the credential's key hash (public: it is on chain); the seal key comes from the
// credential itself, which only its holder and this request have.
Result<AnswerSlot> SlotOf(const RequestContext& ctx, const std::string& idempotency_key) {
    const Caller& caller = CallerOf(ctx);
    AnswerSlot slot;
    slot.scope = "v2:" + common::HexEncode(common::Sha256Hash(WordHex(caller.key_hash) + "\n" + idempotency_key));
    SIGIL_TRY(credential, ExtractApiKey(ctx.request));
    SIGIL_TRY(key, common::HkdfSha256(credential->view(), View(ANSWER_KEY_SALT), View(slot.scope),
                                      common::AES_GCM_KEY_SIZE));
    slot.seal_key = std::move(*key);
    return slot;
}

// The transaction a stored answer still waits for: a 202 (a minted answer, pending) carries it as
// "tx_hash", a 5xx error as "error.tx_hash". Empty for every settled answer.
std::string PendingTxOf(int status, const std::string& body) {
    if (status != 202 && status < 500) return {};
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError() || !doc.IsObject()) return {};
    const rapidjson::Value* holder = &doc;
    if (status != 202) {
        auto e = doc.FindMember("error");
        if (e == doc.MemberEnd() || !e->value.IsObject()) return {};
        holder = &e->value;
    }
    auto tx = holder->FindMember("tx_hash");
    return tx != holder->MemberEnd() && tx->value.IsString() ? std::string(tx->value.GetString()) : std::string();
}

// A pending 202 answer once its transaction is mined: the same members without "pending" and "tx_hash".
std::string SettledBody(const std::string& pending_body) {
    rapidjson::Document doc;
    doc.Parse(pending_body.data(), pending_body.size());
    if (doc.HasParseError() || !doc.IsObject()) return pending_body;
    doc.RemoveMember("pending");
    doc.RemoveMember("tx_hash");
    return common::JsonSerialize(doc);
}

HttpResponse Replayed(int status, const std::string& body) {
    HttpResponse replay = JsonResponse(status, body);
    replay.SetHeader("Idempotent-Replayed", "true");
    return replay;
}

// Whether an answer is the request's outcome (kept and replayed) or a refusal to try now, after
// which the same request must run again: no credit (a top-up follows), overloaded, a server failure.
// A failure whose transaction went out is kept: the retry must follow that transaction, never send another.
bool Keep(const Result<HttpResponse>& result, int status) {
    if (!result.ok() && !result.error().tx_hash.empty()) return true;
    return status < 500 && status != 402 && status != 429;
}

common::Error InProgress() {
    return MakeError(ErrorKind::Conflict, "idempotency_in_progress",
                     "a request with this Idempotency-Key is still running; retry shortly");
}

}  // namespace

// The first answer is kept 24 h and replayed; a server failure is released so the retry runs again,
// except one that broadcast a transaction of unknown outcome: that answer is kept with the
// transaction's hash, and a retry follows the transaction instead of writing again (pending: the same
// answer; reverted: the write runs again; mined: the write completes from its receipt, or a minted 202
// becomes its 200).
Handler Idempotent(Service& service, billing::Billing* b, Handler inner) {
    return [&service, b, inner](RequestContext& ctx) -> Result<HttpResponse> {
        const auto key = ctx.request.Header("idempotency-key");
        if (!key) return inner(ctx);
        if (!ValidIdempotencyKey(*key)) {
            return MakeError(ErrorKind::InvalidInput, "invalid_idempotency_key",
                             "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces");
        }
        if (b == nullptr || b->settings().database.empty()) {
            return ErrorResponse(501, "idempotency_not_supported",
                                 "this instance keeps no answers for Idempotency-Key ([billing] database)");
        }
        SIGIL_TRY(ledger, b->Store());
        SIGIL_TRY(slot, SlotOf(ctx, *key));
        const std::string& scope = slot->scope;
        const std::string hash =
            common::HexEncode(common::Sha256Hash(ctx.request.method + " " + ctx.request.path + "\n" + ctx.request.body));
        billing::ClaimPolicy policy;
        policy.owner = WordHex(CallerOf(ctx).account_hash);
        policy.max_per_owner = b->settings().idempotency_keys_per_account;
        policy.lease_ms = b->settings().idempotency_lease_ms;
        SIGIL_TRY(existing, (*ledger)->Claim(scope, hash, policy));
        std::optional<Receipt> adopt;  // of a mined transaction the write completes from instead of sending
        if (*existing) {
            const billing::StoredAnswer& answer = **existing;
            if (answer.request_hash != hash) {
                return MakeError(ErrorKind::MalformedJson, "idempotency_key_reused",
                                 "this Idempotency-Key was used with another request; use a new key");
            }
            if (answer.status == 0) return InProgress();
            SIGIL_TRY(body, slot->Open(answer.body));
            const std::string tx = PendingTxOf(answer.status, *body);
            if (tx.empty()) return Replayed(answer.status, *body);
            SIGIL_TRY(contract, service.Contract());
            using State = TxSender::Outcome::State;
            auto outcome = (*contract)->TransactionOutcome(tx);
            // The chain cannot tell yet (still pending, or unreachable): the answer stands as it was.
            if (!outcome.ok() || outcome->state == State::Pending) return Replayed(answer.status, *body);
            // Mined and successful; otherwise reverted, or dropped from the node's pool (never mined).
            const bool mined = outcome->state == State::Mined && outcome->receipt.success;
            if (answer.status == 202) {
                const HttpResponse settled =
                    mined ? JsonResponse(200, SettledBody(*body))
                    : outcome->state == State::Mined
                        ? ErrorResponse(409, "tx_reverted", "the transaction was mined but reverted: " + tx)
                        : ErrorResponse(409, "tx_dropped", "the transaction was dropped and never mined: " + tx);
                auto sealed = slot->Seal(settled.body);
                const auto st = sealed.ok() ? (*ledger)->Replace(scope, 202, settled.status, *sealed)
                                            : Result<bool>(sealed.error());
                if (!st.ok()) common::LogError("idempotency answer not updated: " + st.error().message, ctx.request.request_id);
                return Replayed(settled.status, settled.body);
            }
            // A failed write whose transaction is now settled: take the scope back and run the write
            // again, completing from the mined receipt, or afresh if it reverted.
            SIGIL_TRY(retaken, (*ledger)->Replace(scope, answer.status, 0, ""));
            if (!*retaken) return InProgress();
            if (mined) adopt = std::move(outcome->receipt);
        }
        if (adopt) {
            SIGIL_TRY(contract, service.Contract());
            (*contract)->AdoptNextWrite(std::move(*adopt));
        }
        auto result = inner(ctx);
        if (adopt) {
            if (auto contract = service.Contract(); contract.ok()) (*contract)->AdoptNothing();
        }
        HttpResponse response = result.ok() ? std::move(result).value() : ErrorResponse(result.error());
        common::Status stored = common::Success();
        if (Keep(result, response.status)) {
            auto sealed = slot->Seal(response.body);
            stored = sealed.ok() ? (*ledger)->Finish(scope, response.status, *sealed) : common::Status(sealed.error());
        } else {
            stored = (*ledger)->Release(scope);
        }
        if (!stored.ok()) {
            common::LogError("idempotency answer not stored: " + stored.error().message, ctx.request.request_id);
            // A claim left pending is taken over after its lease and the request runs again anyway;
            // released, the retry need not wait for that.
            (void)(*ledger)->Release(scope);
        }
        return response;
    };
}

}  // namespace sigil::workers
