#include "common/keccak.h"

#include <cstring>

namespace sigil::common {
namespace {

constexpr std::size_t kRate = 136;  // 1088-bit rate for a 256-bit capacity-512 sponge

constexpr std::uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

// Rotation offsets and lane permutation of rho+pi, walked along the pi cycle starting at lane 1.
constexpr int kRho[24] = {1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44};
constexpr int kPi[24] = {10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1};

inline std::uint64_t Rotl(std::uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

void KeccakF1600(std::uint64_t s[25]) {
    for (int round = 0; round < 24; ++round) {
        std::uint64_t c[5];
        for (int x = 0; x < 5; ++x) c[x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20];
        for (int x = 0; x < 5; ++x) {
            const std::uint64_t d = c[(x + 4) % 5] ^ Rotl(c[(x + 1) % 5], 1);
            for (int y = 0; y < 25; y += 5) s[y + x] ^= d;
        }
        std::uint64_t t = s[1];
        for (int i = 0; i < 24; ++i) {
            const int j = kPi[i];
            const std::uint64_t next = s[j];
            s[j] = Rotl(t, kRho[i]);
            t = next;
        }
        for (int y = 0; y < 25; y += 5) {
            std::uint64_t row[5];
            for (int x = 0; x < 5; ++x) row[x] = s[y + x];
            for (int x = 0; x < 5; ++x) s[y + x] = row[x] ^ ((~row[(x + 1) % 5]) & row[(x + 2) % 5]);
        }
        s[0] ^= kRoundConstants[round];
    }
}

inline std::uint64_t LoadLe64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

void AbsorbBlock(std::uint64_t s[25], const std::uint8_t* block) {
    for (std::size_t i = 0; i < kRate / 8; ++i) s[i] ^= LoadLe64(block + 8 * i);
    KeccakF1600(s);
}

}  // namespace

Keccak256::Keccak256() {
    std::memset(m_state, 0, sizeof m_state);
    std::memset(m_buf, 0, sizeof m_buf);
}

void Keccak256::Update(ByteView data) {
    if (data.empty()) return;  // an empty span may carry a null pointer, which memcpy must not see
    const std::uint8_t* p = data.data();
    std::size_t n = data.size();
    if (m_len > 0) {
        const std::size_t take = std::min(n, kRate - m_len);
        std::memcpy(m_buf + m_len, p, take);
        m_len += take;
        p += take;
        n -= take;
        if (m_len < kRate) return;
        AbsorbBlock(m_state, m_buf);
        m_len = 0;
    }
    while (n >= kRate) {
        AbsorbBlock(m_state, p);
        p += kRate;
        n -= kRate;
    }
    if (n > 0) {
        std::memcpy(m_buf, p, n);
        m_len = n;
    }
}

Hash32 Keccak256::Final() {
    std::memset(m_buf + m_len, 0, kRate - m_len);
    m_buf[m_len] ^= 0x01;  // Keccak padding, not SHA-3's 0x06
    m_buf[kRate - 1] ^= 0x80;
    AbsorbBlock(m_state, m_buf);
    Hash32 out;
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t b = 0; b < 8; ++b) out[8 * i + b] = static_cast<std::uint8_t>(m_state[i] >> (8 * b));
    }
    std::memset(m_state, 0, sizeof m_state);
    m_len = 0;
    return out;
}

Hash32 Keccak256Hash(ByteView data) {
    Keccak256 h;
    h.Update(data);
    return h.Final();
}

}  // namespace sigil::common
