#include "keyd/receipt_protocol.h"

#include <cstdlib>
#include <cstring>

#include "common/ipc_frame.h"

namespace sigil::keyd {
namespace {

using common::AsBytes;
using common::ErrorKind;
using common::MakeError;
using common::MessageReader;
using common::MessageWriter;

common::Error Malformed(std::string_view what) {
    return MakeError(ErrorKind::InvalidInput, "malformed_message", std::string(what));
}

common::Error ProtocolError(std::string_view what) {
    return MakeError(ErrorKind::Internal, "keyd_protocol_error", "keyd reply: " + std::string(what));
}

template <std::size_t N>
bool CopyFixed(MessageReader& r, std::array<std::uint8_t, N>* out) {
    auto v = r.GetFixed(N);
    if (!v.ok()) return false;
    std::memcpy(out->data(), v->data(), N);
    return true;
}

bool GetText(MessageReader& r, std::size_t max, std::string* out) {
    auto v = r.GetBytes(max);
    if (!v.ok()) return false;
    out->assign(reinterpret_cast<const char*>(v->data()), v->size());
    return true;
}

}  // namespace

Result<SecretBuffer> EncodeSignReceiptRequest(const ReceiptSignRequest& request) {
    const common::ReceiptFields& f = request.fields;
    SIGIL_TRY_STATUS(common::ValidateReceiptFields(f));
    if (request.api_key.size() == 0 || request.api_key.size() > IPC_MAX_API_KEY) {
        return Malformed("the API key must be 1..256 bytes");
    }
    MessageWriter w(IPC_SIGN_RECEIPT);
    w.PutBytes(AsBytes(f.cid));
    w.PutBytes(f.params_hash);
    w.PutBytes(f.response_hash);
    w.PutBytes(f.pkp);
    w.PutBytes(request.api_key.view());
    w.PutBytes(AsBytes(f.request_id));
    w.PutU64(f.issued_at);
    w.PutBytes(f.app_id);
    w.PutBytes(AsBytes(f.ending));
    return std::move(w).Finish();
}

SecretBuffer EncodeGetReceiptPublicRequest() {
    auto frame = MessageWriter(IPC_GET_RECEIPT_PUBLIC).Finish();
    if (!frame.ok()) std::abort();  // an empty message always fits
    return std::move(frame).value();
}

Result<ReceiptSignRequest> DecodeSignReceiptRequest(ByteView payload) {
    SIGIL_TRY(r, MessageReader::Open(payload));
    if (r->Type() != IPC_SIGN_RECEIPT) return Malformed("unexpected message type");
    ReceiptSignRequest out;
    common::ReceiptFields& f = out.fields;
    if (!GetText(*r, common::RECEIPT_MAX_CID, &f.cid) || !CopyFixed(*r, &f.params_hash) ||
        !CopyFixed(*r, &f.response_hash) || !CopyFixed(*r, &f.pkp)) {
        return Malformed("malformed receipt request");
    }
    auto key = r->GetBytes(IPC_MAX_API_KEY);
    if (!key.ok() || key->empty()) return Malformed("malformed receipt request: API key");
    out.api_key = SecretBytes(*key);
    if (!GetText(*r, common::RECEIPT_MAX_REQUEST_ID, &f.request_id)) return Malformed("malformed receipt request");
    auto issued_at = r->GetU64();
    if (!issued_at.ok()) return Malformed("malformed receipt request");
    f.issued_at = *issued_at;
    if (!CopyFixed(*r, &f.app_id) || !GetText(*r, common::RECEIPT_MAX_ENDING, &f.ending) || !r->Finish().ok()) {
        return Malformed("malformed receipt request");
    }
    SIGIL_TRY_STATUS(common::ValidateReceiptFields(f));
    return out;
}

SecretBuffer EncodeReceiptSignatureReply(const ReceiptSignature& signature) {
    MessageWriter w(IPC_RECEIPT_SIGNATURE);
    w.PutBytes(signature.signature);
    w.PutBytes(signature.api_key_hash);
    auto frame = std::move(w).Finish();
    if (!frame.ok()) std::abort();  // 97 bytes always fit
    return std::move(frame).value();
}

Result<ReceiptSignature> DecodeReceiptSignatureReply(ByteView payload) {
    auto r = MessageReader::Open(payload);
    if (!r.ok()) return ProtocolError("empty payload");
    if (r->Type() == static_cast<std::uint8_t>(KeydMessage::Failure)) {
        SIGIL_TRY(failure, DecodeFailureReply(payload));
        return KeydFailureToError(failure->code, failure->message);
    }
    if (r->Type() != IPC_RECEIPT_SIGNATURE) return ProtocolError("unexpected reply type");
    ReceiptSignature out;
    if (!CopyFixed(*r, &out.signature) || !CopyFixed(*r, &out.api_key_hash) || !r->Finish().ok()) {
        return ProtocolError("malformed receipt signature");
    }
    return out;
}

}  // namespace sigil::keyd
