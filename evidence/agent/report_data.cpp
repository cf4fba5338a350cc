#include "evidence/agent/report_data.h"

#include <cstdlib>

#include <openssl/evp.h>

#include "common/handles.h"
#include "common/sha256.h"

namespace sigil::evidence {

common::Bytes NonceReportData(common::ByteView nonce) {
    // SHA-512 is used nowhere else, so it gets no common/ module of its own.
    common::Bytes out(EVP_MAX_MD_SIZE);
    unsigned int length = 0;
    const common::CHandle<EVP_MD_CTX, EVP_MD_CTX_free> ctx(EVP_MD_CTX_new());
    const bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha512(), nullptr) == 1 &&
                    EVP_DigestUpdate(ctx.get(), NONCE_REPORT_DATA_LABEL.data(), NONCE_REPORT_DATA_LABEL.size()) == 1 &&
                    EVP_DigestUpdate(ctx.get(), nonce.data(), nonce.size()) == 1 &&
                    EVP_DigestFinal_ex(ctx.get(), out.data(), &length) == 1;
    // As common::Sha256: an OpenSSL failure here is a broken library, not bad input.
    if (!ok || length != 64) std::abort();
    out.resize(length);
    return out;
}

common::Bytes EvidenceReportData(std::string_view sha256sum_text) {
    const auto digest = common::Sha256Hash(sha256sum_text);
    common::Bytes out(digest.begin(), digest.end());
    out.resize(64, 0);
    return out;
}

}  // namespace sigil::evidence
