// Chain client latencies on a local anvil: eth_call, a cached permission check, and a relayed write
// (estimate, fees, nonce, sign, send, receipt).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/keccak.h"
#include "common/random.h"
#include "tests/chain/chain_fixture.h"

using namespace sigil;
using namespace std::chrono_literals;

namespace {

struct Percentiles {
    double p50_us, p99_us, mean_us;
};

template <typename F>
Percentiles Time(int n, F body) {
    std::vector<double> us;
    for (int i = 0; i < n; ++i) {
        const auto t = std::chrono::steady_clock::now();
        body();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
    }
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double v : us) sum += v;
    return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)], sum / us.size()};
}

void Print(const char* name, int n, const Percentiles& p) {
    std::printf("%-44s n=%-5d p50 %9.1f us   p99 %9.1f us   mean %9.1f us\n", name, n, p.p50_us, p.p99_us, p.mean_us);
}

common::Uint256 RandomHash() { return common::Uint256::FromWord(common::Keccak256Hash(common::RandomBytes(32))); }

}  // namespace

int main() {
    test::Anvil anvil(test::FreePort());
    anvil.Start();
    const auto chain = test::Deploy(anvil.Url());
    test::ChainStack uncached(chain, test::DevKey(1), 0ms);
    test::ChainStack cached(chain, test::DevKey(2), 2000ms);

    const auto account = RandomHash();
    if (!uncached.client.NewAccount(account, common::PrivateKey::Generate().Address()).ok()) return 1;
    const auto cid = common::Keccak256Hash(std::string_view("QmBench"));
    const auto pkp = common::PrivateKey::Generate().Address();

    constexpr int READS = 2000, WRITES = 200;
    Print("eth_call canExecute (uncached)", READS, Time(READS, [&] { (void)uncached.client.CanExecute(account, cid, pkp); }));
    Print("eth_call resolveKey (uncached)", READS, Time(READS, [&] { (void)uncached.client.ResolveKey(account); }));
    (void)cached.client.CanExecute(account, cid, pkp);
    Print("canExecute (cached, watcher polling 200 ms)", READS * 10,
          Time(READS * 10, [&] { (void)cached.client.CanExecute(account, cid, pkp); }));
    Print("relayed write newAccount (estimate..receipt)", WRITES,
          Time(WRITES, [&] { (void)uncached.client.NewAccount(RandomHash(), common::PrivateKey::Generate().Address()); }));
    return 0;
}
