// bench_typed_data_auth: latency of the ChainSecured EIP-712 envelope check alone
// (VerifyTypedDataSignature: size, schema, domain, window, ECDSA recovery), p50/p99 per flow, and
// of a refusal at the schema check (no recovery), so the cost of each part shows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "common/eip712.h"
#include "common/hex.h"
#include "common/secp256k1.h"
#include "workers/api/typed_data_auth.h"

using namespace sigil;

namespace {

constexpr std::uint64_t CHAIN_ID = 31337;
constexpr int SAMPLES = 5000;

std::string Document(const std::string& primary, const common::PrivateKey& key, std::int64_t now) {
    return R"({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},)"
           R"({"name":"chainId","type":"uint256"}],")" + primary +
           R"(":[{"name":"address","type":"address"},{"name":"issuedAt","type":"uint256"}]},)"
           R"("primaryType":")" + primary + R"(","domain":{"name":"Sigil ChainSecured","version":"1","chainId":31337},)"
           R"("message":{"address":")" + common::ChecksumAddress(key.Address()) + R"(","issuedAt":)" +
           std::to_string(now) + "}}";
}

std::string Sign(const std::string& text, const common::PrivateKey& key) {
    auto digest = common::HashTypedDataJson(text);
    if (!digest.ok()) {
        std::fprintf(stderr, "cannot hash: %s\n", digest.error().message.c_str());
        std::exit(1);
    }
    auto sig = common::SignDigest(key, *digest);
    sig[64] += 27;
    return common::HexEncode(sig, true);
}

void Run(const char* name, const std::string& text, const std::string& sig, const workers::TypedDataPolicy& policy,
         bool expect_ok) {
    std::vector<double> us;
    us.reserve(SAMPLES);
    for (int i = 0; i < SAMPLES + 100; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = workers::VerifyTypedDataSignature(text, sig, policy);
        const auto t1 = std::chrono::steady_clock::now();
        if (r.ok() != expect_ok) {
            std::fprintf(stderr, "%s: unexpected %s\n", name, r.ok() ? "success" : r.error().code.c_str());
            std::exit(1);
        }
        if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("%-44s n=%d  p50 %8.1f us  p99 %8.1f us\n", name, SAMPLES, us[us.size() / 2],
                us[std::min(us.size() - 1, us.size() * 99 / 100)]);
}

}  // namespace

int main() {
    const common::PrivateKey key = common::PrivateKey::Generate();
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    const struct {
        const char* primary;
        workers::SignatureFlow flow;
    } flows[] = {{"CreateWallet", workers::SignatureFlow::CreateWallet},
                 {"AddUsageApiKey", workers::SignatureFlow::AddUsageApiKey},
                 {"ConvertAccount", workers::SignatureFlow::ConvertAccount}};
    for (const auto& f : flows) {
        const std::string text = Document(f.primary, key, now);
        workers::TypedDataPolicy policy;
        policy.flow = f.flow;
        policy.chain_id = CHAIN_ID;
        policy.now = now;
        if (f.flow == workers::SignatureFlow::ConvertAccount) policy.expected_signer = key.Address();
        Run((std::string("verify ") + f.primary + " (accepted)").c_str(), text, Sign(text, key), policy, true);
    }
    // Refused at the schema check: the cost a malformed request imposes.
    std::string reordered = Document("CreateWallet", key, now);
    const std::string a = R"({"name":"address","type":"address"},{"name":"issuedAt","type":"uint256"})";
    reordered.replace(reordered.find(a), a.size(), R"({"name":"issuedAt","type":"uint256"},{"name":"address","type":"address"})");
    workers::TypedDataPolicy policy;
    policy.flow = workers::SignatureFlow::CreateWallet;
    policy.chain_id = CHAIN_ID;
    policy.now = now;
    Run("verify CreateWallet (refused: schema)", reordered, Sign(reordered, key), policy, false);
    return 0;
}
