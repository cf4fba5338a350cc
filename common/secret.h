// Secret byte buffers: locked in memory (no swap), wiped on destruction, never copied implicitly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"

namespace sigil::common {

// Overwrite memory so the compiler cannot elide it.
void Wipe(void* p, std::size_t n);

// A fixed-size secret. Move-only; the storage is mlock()ed when possible and wiped on
// destruction and on move-out. Never put its contents in a std::string or a log line.
class SecretBytes {
public:
    SecretBytes() = default;
    explicit SecretBytes(std::size_t n);
    SecretBytes(ByteView init);  // copies, then the caller should wipe its own copy
    ~SecretBytes();
    SecretBytes(SecretBytes&& other) noexcept;
    SecretBytes& operator=(SecretBytes&& other) noexcept;
    SecretBytes(const SecretBytes&) = delete;
    SecretBytes& operator=(const SecretBytes&) = delete;

    std::uint8_t* data() { return m_data; }
    const std::uint8_t* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    ByteView view() const { return {m_data, m_size}; }
    // The bytes as text, for secrets that are text (an API key, which is also the owner wallet's
    // private key in base64). Read it in place; copying it into a std::string defeats the wipe.
    std::string_view text() const { return {reinterpret_cast<const char*>(m_data), m_size}; }

    // Explicit copy, so duplicating a secret is always visible in the code.
    SecretBytes Clone() const { return SecretBytes(view()); }

private:
    void Release();
    std::uint8_t* m_data = nullptr;
    std::size_t m_size = 0;
    bool m_locked = false;
};

}  // namespace sigil::common
