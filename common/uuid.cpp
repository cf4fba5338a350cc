#include "common/uuid.h"

#include <pthread.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "common/random.h"

namespace sigil::common {
namespace {

constexpr char DIGITS[] = "0123456789abcdef";

bool IsHyphenOffset(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// Request ids need one UUID per request: drawing 16 bytes from RAND_bytes each time cost the
// worker about 2% of its CPU per request (OpenSSL's DRBG dispatch and a getpid fork check), so
// bytes are drawn 4 KiB at a time. A forked child must never replay its parent's buffer: the
// atfork handler empties it in every child.
struct RandomPool {
    std::array<std::uint8_t, 4096> bytes{};
    std::size_t used = sizeof(bytes);  // empty
};
thread_local RandomPool t_pool;
std::once_flag g_atfork_once;

void TakeRandom(std::uint8_t* out, std::size_t n) {
    std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, [] { t_pool.used = sizeof(t_pool.bytes); }); });
    if (t_pool.used + n > t_pool.bytes.size()) {
        RandomFill(t_pool.bytes.data(), t_pool.bytes.size());
        t_pool.used = 0;
    }
    std::memcpy(out, t_pool.bytes.data() + t_pool.used, n);
    std::memset(t_pool.bytes.data() + t_pool.used, 0, n);  // each byte is handed out once
    t_pool.used += n;
}

}  // namespace

std::string NewUuidV4() {
    std::array<std::uint8_t, 16> b{};
    TakeRandom(b.data(), b.size());
    b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
    b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += DIGITS[b[i] >> 4];
        out += DIGITS[b[i] & 0x0f];
    }
    return out;
}

bool IsUuid(std::string_view text) {
    if (text.size() != 36) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (IsHyphenOffset(i)) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

}  // namespace sigil::common
