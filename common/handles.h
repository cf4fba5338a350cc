// RAII for C handles: one deleter template for library objects, a small class for descriptors.
#pragma once

#include <memory>
#include <utility>

namespace sigil::common {

// CHandle<T, Free> owns a T* and releases it with Free, e.g.
//   using EvpCipherCtx = CHandle<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;
template <auto FreeFn>
struct CDeleter {
    template <typename T>
    void operator()(T* p) const noexcept {
        if (p != nullptr) FreeFn(p);
    }
};

template <typename T, auto FreeFn>
using CHandle = std::unique_ptr<T, CDeleter<FreeFn>>;

// Owns a file descriptor; closes it once.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    ~UniqueFd() { Reset(); }
    UniqueFd(UniqueFd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o) {
            Reset();
            m_fd = std::exchange(o.m_fd, -1);
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    int Release() { return std::exchange(m_fd, -1); }
    void Reset(int fd = -1);

private:
    int m_fd = -1;
};

}  // namespace sigil::common
