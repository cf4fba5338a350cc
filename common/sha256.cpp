#include "common/sha256.h"

#include <cstdio>
#include <cstdlib>

namespace sigil::common {
namespace {

[[noreturn]] void Fatal(const char* what) {
    std::fprintf(stderr, "sigil: SHA-256 %s failed\n", what);
    std::abort();
}

}  // namespace

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
    if (!m_ctx) Fatal("context allocation");
    if (EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr) != 1) Fatal("init");
}

void Sha256::Update(ByteView data) {
    if (m_finished) Fatal("update after final");
    if (data.empty()) return;
    if (EVP_DigestUpdate(m_ctx.get(), data.data(), data.size()) != 1) Fatal("update");
}

Hash32 Sha256::Final() {
    if (m_finished) Fatal("second final");
    m_finished = true;
    Hash32 out{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(m_ctx.get(), out.data(), &len) != 1 || len != out.size()) Fatal("final");
    return out;
}

Hash32 Sha256Hash(ByteView data) {
    Sha256 h;
    h.Update(data);
    return h.Final();
}

}  // namespace sigil::common
