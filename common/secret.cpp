#include "common/secret.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <openssl/crypto.h>

namespace sigil::common {

void Wipe(void* p, std::size_t n) {
    if (p != nullptr && n != 0) OPENSSL_cleanse(p, n);
}

bool ConstantTimeEqual(ByteView a, ByteView b) {
    if (a.size() != b.size()) return false;
    if (a.empty()) return true;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

SecretBytes::SecretBytes(std::size_t n) : m_size(n) {
    if (n == 0) return;
    m_data = static_cast<std::uint8_t*>(std::calloc(n, 1));
    if (m_data == nullptr) throw std::bad_alloc();
    // mlock can fail under RLIMIT_MEMLOCK; the secret is still wiped, just swappable.
    m_locked = ::mlock(m_data, n) == 0;
}

SecretBytes::SecretBytes(ByteView init) : SecretBytes(init.size()) {
    if (!init.empty()) std::memcpy(m_data, init.data(), init.size());
}

SecretBytes::~SecretBytes() { Release(); }

SecretBytes::SecretBytes(SecretBytes&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_locked(std::exchange(other.m_locked, false)) {}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
    if (this != &other) {
        Release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_locked = std::exchange(other.m_locked, false);
    }
    return *this;
}

void SecretBytes::Release() {
    if (m_data == nullptr) return;
    Wipe(m_data, m_size);
    if (m_locked) ::munlock(m_data, m_size);
    std::free(m_data);
    m_data = nullptr;
    m_size = 0;
    m_locked = false;
}

}  // namespace sigil::common
