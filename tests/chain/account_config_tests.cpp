// AccountConfig through the C++ chain client against a real anvil: the spec's permission matrix,
// positive and negative, and each safety rule of DESIGN.md section 3.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <thread>

#include "common/keccak.h"
#include "common/random.h"
#include "tests/chain/chain_fixture.h"

using namespace sigil;
using namespace sigil::workers;
using common::Address20;
using common::ErrorKind;
using common::Hash32;
using common::Uint256;
using namespace std::chrono_literals;

namespace {

test::Anvil* g_anvil = nullptr;
test::Deployment g_deployment;

const test::Deployment& Chain() {
    if (g_anvil == nullptr) {
        g_anvil = new test::Anvil(test::FreePort());
        g_anvil->Start();
        g_deployment = test::Deploy(g_anvil->Url());
    }
    return g_deployment;
}

struct AnvilReaper {
    ~AnvilReaper() { delete g_anvil; }
} g_reaper;

Uint256 RandomKeyHash() { return Uint256::FromWord(common::Keccak256Hash(common::RandomBytes(32))); }
Hash32 RandomCidHash() { return common::Keccak256Hash(common::RandomBytes(32)); }
Address20 RandomAddress() { return common::PrivateKey::Generate().Address(); }

void ExpectError(const common::Status& s, ErrorKind kind, const std::string& code) {
    CPPUNIT_ASSERT_MESSAGE("expected error " + code, !s.ok());
    CPPUNIT_ASSERT_EQUAL_MESSAGE(s.error().message, code, s.error().code);
    CPPUNIT_ASSERT_MESSAGE(code, s.error().kind == kind);
}

template <typename T>
common::Status AsStatus(const common::Result<T>& r) {
    if (!r.ok()) return r.error();
    return common::Success();
}

}  // namespace

class AccountConfigTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AccountConfigTests);
    CPPUNIT_TEST(testOwnerCanDoEverythingIncludingExecute);
    CPPUNIT_TEST(testPerGroupScopesReachOnlyTheirGroups);
    CPPUNIT_TEST(testWildcardZeroMeansAllGroupsForAllFour);
    CPPUNIT_TEST(testAccountWideScopes);
    CPPUNIT_TEST(testKeyWithNothingIsRefusedEverywhere);
    CPPUNIT_TEST(testUsageKeyCannotManageKeysOrRaiseItsScopes);
    CPPUNIT_TEST(testUpdateReplacesEveryPermission);
    CPPUNIT_TEST(testRemovedKeyIsNoLongerValid);
    CPPUNIT_TEST(testExpiryUsesTheWorkerClockToo);  // before testExpiredKeyIsRefused moves chain time
    CPPUNIT_TEST(testExpiredKeyIsRefused);
    CPPUNIT_TEST(testKeyHashCannotBeClaimedTwice);
    CPPUNIT_TEST(testDerivationPathRules);
    CPPUNIT_TEST(testNoAccountReachesAnotherAccountsPkp);
    CPPUNIT_TEST(testConversionEndsRelayedWrites);
    CPPUNIT_TEST(testAccountOfAdminFollowsConversion);
    CPPUNIT_TEST(testWriteThatChangesNothingIsAConflict);
    CPPUNIT_TEST(testDirectWriteVisibleWithinFiveSeconds);
    CPPUNIT_TEST(testListsPageAndCarryFields);
    CPPUNIT_TEST(testPageLargerThanOneViewCallIsAssembled);
    CPPUNIT_TEST(testErrorTableMatchesCompiledAbi);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<test::ChainStack> m_stack;

    AccountConfigClient& C() { return m_stack->client; }

    // A managed account with one registered PKP; returns its hash (= the owner key hash).
    Uint256 NewAccount() {
        const Uint256 account = RandomKeyHash();
        CPPUNIT_ASSERT(C().NewAccount(account, RandomAddress()).ok());
        return account;
    }
    Address20 NewPkp(const Uint256& account) {
        const Address20 pkp = RandomAddress();
        auto path = Uint256::FromWord(common::Keccak256Hash(common::RandomBytes(32)));
        auto s = C().RegisterWalletDerivation(account, account, pkp, path, "pkp", "");
        CPPUNIT_ASSERT_MESSAGE(s.ok() ? "" : s.error().message, s.ok());
        return pkp;
    }
    std::uint64_t NewGroup(const Uint256& account) {
        auto id = C().AddGroup(account, account, "g", "d", {}, {});
        CPPUNIT_ASSERT_MESSAGE(id.ok() ? "" : id.error().message, id.ok());
        return *id;
    }
    std::uint64_t LatestBlockTime() {
        auto head = m_stack->rpc.CallForResult("eth_getBlockByNumber", "[\"latest\",false]");
        rapidjson::Document block;
        block.Parse(head->c_str());
        return *workers::ParseQuantity(block["timestamp"].GetString());
    }
    Uint256 NewKey(const Uint256& account, const Permissions& p, std::uint64_t expiration = 0) {
        const Uint256 key = RandomKeyHash();
        auto s = C().SetUsageApiKey(account, account, key, expiration, Uint256(), "k", "", p);
        CPPUNIT_ASSERT_MESSAGE(s.ok() ? "" : s.error().message, s.ok());
        return key;
    }

public:
    void setUp() override { m_stack = std::make_unique<test::ChainStack>(Chain(), test::DevKey(1), 2000ms); }
    void tearDown() override { m_stack.reset(); }

    void testOwnerCanDoEverythingIncludingExecute() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g = NewGroup(a);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(!*C().CanExecute(a, cid, pkp));
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g, pkp).ok());
        CPPUNIT_ASSERT(*C().CanExecute(a, cid, pkp));
        auto info = C().ResolveKey(a);
        CPPUNIT_ASSERT(info->valid && info->is_owner && info->account_hash == a);
        CPPUNIT_ASSERT(C().RemovePkpFromGroup(a, a, g, pkp).ok());
        CPPUNIT_ASSERT(!*C().CanExecute(a, cid, pkp));
        CPPUNIT_ASSERT(C().AddAction(a, a, cid, "n", "d").ok());
        CPPUNIT_ASSERT(C().UpdateActionMetadata(a, a, cid, "n2", "d2").ok());
        CPPUNIT_ASSERT(C().DeleteAction(a, a, cid).ok());
        CPPUNIT_ASSERT(C().RemoveGroup(a, a, g).ok());
        ExpectError(AsStatus(C().GetGroup(a, g)), ErrorKind::NotFound, "unknown_group");
    }

    void testPerGroupScopesReachOnlyTheirGroups() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g1 = NewGroup(a), g2 = NewGroup(a);
        const Hash32 cid = RandomCidHash();
        // group:manageActions on g1 only
        Permissions manage;
        manage.manage_ipfs_ids_in_groups = {g1};
        const Uint256 km = NewKey(a, manage);
        CPPUNIT_ASSERT(C().AddActionToGroup(a, km, g1, cid).ok());
        ExpectError(C().AddActionToGroup(a, km, g2, cid), ErrorKind::Forbidden, "missing_scope");
        CPPUNIT_ASSERT(C().RemoveActionFromGroup(a, km, g1, cid).ok());
        // group:addPkp on g1 cannot add to g2, and cannot remove from g1 (spec rule 1)
        Permissions add;
        add.add_pkp_to_groups = {g1};
        const Uint256 ka = NewKey(a, add);
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, ka, g1, pkp).ok());
        ExpectError(C().AddPkpToGroup(a, ka, g2, pkp), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().RemovePkpFromGroup(a, ka, g1, pkp), ErrorKind::Forbidden, "missing_scope");
        // group:removePkp on g1 only
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g2, pkp).ok());
        Permissions rem;
        rem.remove_pkp_from_groups = {g1};
        const Uint256 kr = NewKey(a, rem);
        ExpectError(C().RemovePkpFromGroup(a, kr, g2, pkp), ErrorKind::Forbidden, "missing_scope");
        CPPUNIT_ASSERT(C().RemovePkpFromGroup(a, kr, g1, pkp).ok());
        // execute on g1: only g1 counts, even though g2 lists the same PKP and CID
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g2, cid).ok());
        Permissions exec;
        exec.execute_in_groups = {g1};
        const Uint256 ke = NewKey(a, exec);
        CPPUNIT_ASSERT(!*C().CanExecute(ke, cid, pkp));  // g2 lists both, but ke may not execute there
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g1, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g1, pkp).ok());
        CPPUNIT_ASSERT(*C().CanExecute(ke, cid, pkp));
        CPPUNIT_ASSERT(*C().KeyHasScope(ke, Scope::Execute, g1));
        CPPUNIT_ASSERT(!*C().KeyHasScope(ke, Scope::Execute, g2));
    }

    void testWildcardZeroMeansAllGroupsForAllFour() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g1 = NewGroup(a), g2 = NewGroup(a);
        Permissions p;
        p.manage_ipfs_ids_in_groups = {0};
        p.add_pkp_to_groups = {0};
        p.remove_pkp_from_groups = {0};
        p.execute_in_groups = {0};
        const Uint256 k = NewKey(a, p);
        const Hash32 cid = RandomCidHash();
        for (std::uint64_t g : {g1, g2}) {
            CPPUNIT_ASSERT(C().AddActionToGroup(a, k, g, cid).ok());
            CPPUNIT_ASSERT(C().AddPkpToGroup(a, k, g, pkp).ok());
        }
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));
        CPPUNIT_ASSERT(C().RemovePkpFromGroup(a, k, g1, pkp).ok());
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));  // still listed in g2
        CPPUNIT_ASSERT(C().RemovePkpFromGroup(a, k, g2, pkp).ok());
        CPPUNIT_ASSERT(!*C().CanExecute(k, cid, pkp));
        // A group created after the key was made is covered too.
        const std::uint64_t g3 = NewGroup(a);
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, k, g3, pkp).ok());
        CPPUNIT_ASSERT(C().AddActionToGroup(a, k, g3, cid).ok());
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));
    }

    void testAccountWideScopes() {
        const Uint256 a = NewAccount();
        Permissions p;
        p.can_create_groups = true;
        const Uint256 creator = NewKey(a, p);
        auto g = C().AddGroup(a, creator, "by key", "", {}, {});
        CPPUNIT_ASSERT(g.ok());
        ExpectError(C().RemoveGroup(a, creator, *g), ErrorKind::Forbidden, "missing_scope");
        Permissions d;
        d.can_delete_groups = true;
        const Uint256 deleter = NewKey(a, d);
        ExpectError(AsStatus(C().AddGroup(a, deleter, "x", "", {}, {})), ErrorKind::Forbidden, "missing_scope");
        CPPUNIT_ASSERT(C().RemoveGroup(a, deleter, *g).ok());
        Permissions k;
        k.can_create_pkps = true;
        const Uint256 minter = NewKey(a, k);
        auto path = Uint256::FromWord(RandomCidHash());
        CPPUNIT_ASSERT(C().RegisterWalletDerivation(a, minter, RandomAddress(), path, "w", "").ok());
        ExpectError(C().RegisterWalletDerivation(a, creator, RandomAddress(), Uint256::FromWord(RandomCidHash()), "w", ""),
                    ErrorKind::Forbidden, "missing_scope");
    }

    void testKeyWithNothingIsRefusedEverywhere() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g = NewGroup(a);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g, pkp).ok());
        const Uint256 k = NewKey(a, Permissions{});
        ExpectError(AsStatus(C().AddGroup(a, k, "x", "", {}, {})), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().RemoveGroup(a, k, g), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().AddActionToGroup(a, k, g, RandomCidHash()), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().RemoveActionFromGroup(a, k, g, cid), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().AddPkpToGroup(a, k, g, NewPkp(a)), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().RemovePkpFromGroup(a, k, g, pkp), ErrorKind::Forbidden, "missing_scope");
        ExpectError(C().RegisterWalletDerivation(a, k, RandomAddress(), Uint256::FromWord(RandomCidHash()), "", ""),
                    ErrorKind::Forbidden, "missing_scope");
        CPPUNIT_ASSERT(!*C().CanExecute(k, cid, pkp));
    }

    void testUsageKeyCannotManageKeysOrRaiseItsScopes() {
        const Uint256 a = NewAccount();
        Permissions all;
        all.can_create_groups = all.can_delete_groups = all.can_create_pkps = true;
        all.manage_ipfs_ids_in_groups = all.add_pkp_to_groups = all.remove_pkp_from_groups = all.execute_in_groups = {0};
        const Uint256 k = NewKey(a, all);
        const Uint256 other = NewKey(a, Permissions{});
        ExpectError(C().SetUsageApiKey(a, k, RandomKeyHash(), 0, Uint256(), "n", "", all), ErrorKind::Forbidden,
                    "owner_only");
        ExpectError(C().SetUsageApiKey(a, k, other, 0, Uint256(), "n", "", all), ErrorKind::Forbidden, "owner_only");
        ExpectError(C().SetUsageApiKey(a, k, k, 0, Uint256(), "n", "", all), ErrorKind::Forbidden, "owner_only");
        ExpectError(C().UpdateUsageApiKeyMetadata(a, k, other, "n", "d"), ErrorKind::Forbidden, "owner_only");
        ExpectError(C().RemoveUsageApiKey(a, k, other), ErrorKind::Forbidden, "owner_only");
        CPPUNIT_ASSERT(C().ResolveKey(other)->valid);
    }

    void testUpdateReplacesEveryPermission() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g = NewGroup(a);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g, pkp).ok());
        Permissions p;
        p.execute_in_groups = {g};
        p.can_create_groups = true;
        const Uint256 k = NewKey(a, p);
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));
        Permissions fewer;
        fewer.can_create_groups = true;
        CPPUNIT_ASSERT(C().SetUsageApiKey(a, a, k, 0, Uint256(), "k", "", fewer).ok());
        CPPUNIT_ASSERT(!*C().CanExecute(k, cid, pkp));
        CPPUNIT_ASSERT(C().AddGroup(a, k, "still", "", {}, {}).ok());
        auto rec = C().GetUsageKey(a, k);
        CPPUNIT_ASSERT(rec.ok());
        CPPUNIT_ASSERT(rec->permissions.execute_in_groups.empty());
        CPPUNIT_ASSERT(rec->permissions.can_create_groups);
    }

    void testRemovedKeyIsNoLongerValid() {
        const Uint256 a = NewAccount();
        Permissions p;
        p.can_create_groups = true;
        const Uint256 k = NewKey(a, p);
        CPPUNIT_ASSERT(C().RemoveUsageApiKey(a, a, k).ok());
        auto info = C().ResolveKey(k);
        CPPUNIT_ASSERT(!info->valid);
        ExpectError(AsStatus(C().AddGroup(a, k, "x", "", {}, {})), ErrorKind::Forbidden, "not_authorized");
        ExpectError(C().RemoveUsageApiKey(a, a, k), ErrorKind::NotFound, "unknown_key");
    }

    void testExpiredKeyIsRefused() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g = NewGroup(a);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g, pkp).ok());
        auto head = m_stack->rpc.CallForResult("eth_getBlockByNumber", "[\"latest\",false]");
        rapidjson::Document block;
        block.Parse(head->c_str());
        const std::uint64_t now = *workers::ParseQuantity(block["timestamp"].GetString());
        Permissions p;
        p.execute_in_groups = {0};
        p.can_create_groups = true;
        const Uint256 k = NewKey(a, p, now + 100);
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));
        CPPUNIT_ASSERT(m_stack->rpc.CallForResult("evm_increaseTime", "[200]").ok());
        CPPUNIT_ASSERT(m_stack->rpc.CallForResult("evm_mine", "[]").ok());
        m_stack->cache.InvalidateAll();
        CPPUNIT_ASSERT(!*C().CanExecute(k, cid, pkp));
        CPPUNIT_ASSERT(!C().ResolveKey(k)->valid);
        ExpectError(AsStatus(C().AddGroup(a, k, "x", "", {}, {})), ErrorKind::Unauthenticated, "key_expired");
    }

    void testKeyHashCannotBeClaimedTwice() {
        const Uint256 a = NewAccount();
        const Uint256 b = NewAccount();
        ExpectError(C().NewAccount(a, RandomAddress()), ErrorKind::Conflict, "key_hash_taken");
        const Uint256 k = NewKey(a, Permissions{});
        ExpectError(C().SetUsageApiKey(b, b, k, 0, Uint256(), "k", "", Permissions{}), ErrorKind::Conflict,
                    "key_hash_taken");
        ExpectError(C().SetUsageApiKey(b, b, a, 0, Uint256(), "k", "", Permissions{}), ErrorKind::Conflict,
                    "key_hash_taken");
        ExpectError(C().NewAccount(k, RandomAddress()), ErrorKind::Conflict, "key_hash_taken");
    }

    void testDerivationPathRules() {
        const Uint256 a = NewAccount();
        const Uint256 b = NewAccount();
        ExpectError(C().RegisterWalletDerivation(a, a, RandomAddress(), Uint256(), "", ""), ErrorKind::InvalidInput,
                    "zero_path");
        const Uint256 path = Uint256::FromWord(RandomCidHash());
        CPPUNIT_ASSERT(C().RegisterWalletDerivation(a, a, RandomAddress(), path, "", "").ok());
        ExpectError(C().RegisterWalletDerivation(a, a, RandomAddress(), path, "", ""), ErrorKind::Conflict, "path_taken");
        ExpectError(C().RegisterWalletDerivation(b, b, RandomAddress(), path, "", ""), ErrorKind::Conflict, "path_taken");
    }

    void testNoAccountReachesAnotherAccountsPkp() {
        const Uint256 a = NewAccount();
        const Uint256 b = NewAccount();
        const Address20 pkp_a = NewPkp(a);
        const std::uint64_t gb = NewGroup(b);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(C().AddActionToGroup(b, b, gb, cid).ok());
        ExpectError(C().AddPkpToGroup(b, b, gb, pkp_a), ErrorKind::NotFound, "unknown_pkp");
        ExpectError(AsStatus(C().AddGroup(b, b, "steal", "", {pkp_a}, {cid})), ErrorKind::NotFound, "unknown_pkp");
        CPPUNIT_ASSERT(!*C().CanExecute(b, cid, pkp_a));
        // b's owner key cannot act on a's account, nor use a's group ids in b's calls (ids are
        // per account: a's group 2 does not exist in b, which has only group 1).
        NewGroup(a);
        const std::uint64_t ga = NewGroup(a);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, ga);
        ExpectError(C().AddActionToGroup(a, b, ga, cid), ErrorKind::Forbidden, "not_authorized");
        ExpectError(C().RemoveGroup(b, b, ga), ErrorKind::NotFound, "unknown_group");
    }

    void testWriteThatChangesNothingIsAConflict() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const Hash32 cid = RandomCidHash();
        auto g = C().AddGroup(a, a, "g", "d", {pkp}, {cid});
        CPPUNIT_ASSERT(g.ok());
        ExpectError(C().UpdateGroup(a, a, *g, "g", "d", {pkp}, {cid}), ErrorKind::Conflict, "nothing_to_change");
        // A key with no scopes at all gets the same answer, not a mined no-op.
        const Uint256 none = NewKey(a, Permissions{});
        ExpectError(C().UpdateGroup(a, none, *g, "g", "d", {pkp}, {cid}), ErrorKind::Conflict, "nothing_to_change");
        ExpectError(C().SetUsageApiKey(a, a, none, 0, Uint256(), "k", "", Permissions{}), ErrorKind::Conflict,
                    "nothing_to_change");
        ExpectError(C().UpdateUsageApiKeyMetadata(a, a, none, "k", ""), ErrorKind::Conflict, "nothing_to_change");
        CPPUNIT_ASSERT(C().UpdateGroup(a, a, *g, "g2", "d", {pkp}, {cid}).ok());
    }

    void testConversionEndsRelayedWrites() {
        const Uint256 a = NewAccount();
        const Address20 pkp = NewPkp(a);
        const std::uint64_t g = NewGroup(a);
        Permissions p;
        p.execute_in_groups = {g};
        const Uint256 k = NewKey(a, p);
        const Hash32 cid = RandomCidHash();
        CPPUNIT_ASSERT(C().AddActionToGroup(a, a, g, cid).ok());
        CPPUNIT_ASSERT(C().AddPkpToGroup(a, a, g, pkp).ok());
        const Address20 new_admin = RandomAddress();
        CPPUNIT_ASSERT(C().ConvertToChainSecuredAccount(a, new_admin).ok());
        auto acct = C().GetAccount(a);
        CPPUNIT_ASSERT(!acct->managed && acct->admin == new_admin && acct->exists);
        ExpectError(AsStatus(C().AddGroup(a, a, "x", "", {}, {})), ErrorKind::Forbidden, "not_managed");
        ExpectError(C().ConvertToChainSecuredAccount(a, RandomAddress()), ErrorKind::Conflict, "already_unmanaged");
        CPPUNIT_ASSERT(*C().CanExecute(k, cid, pkp));  // usage keys keep authorizing execution
        CPPUNIT_ASSERT(!C().ResolveKey(a)->valid);     // the old master key is no credential any more
    }

    void testAccountOfAdminFollowsConversion() {
        const Uint256 a = RandomKeyHash();
        const Address20 admin = RandomAddress();
        CPPUNIT_ASSERT(C().NewAccount(a, admin).ok());
        CPPUNIT_ASSERT(*C().AccountOfAdmin(admin) == a);
        CPPUNIT_ASSERT(C().AccountOfAdmin(RandomAddress())->IsZero());
        const Address20 new_admin = RandomAddress();
        CPPUNIT_ASSERT(C().ConvertToChainSecuredAccount(a, new_admin).ok());
        CPPUNIT_ASSERT(*C().AccountOfAdmin(new_admin) == a);
        CPPUNIT_ASSERT(C().AccountOfAdmin(admin)->IsZero());
    }

    // A chain that mines on demand keeps an old block.timestamp: the contract alone would still
    // call the key live, the client's own clock does not.
    void testExpiryUsesTheWorkerClockToo() {
        const Uint256 a = NewAccount();
        Permissions p;
        p.can_create_groups = true;
        const auto wall = static_cast<std::uint64_t>(std::time(nullptr));
        if (LatestBlockTime() > wall + 1) {
            std::puts("testExpiryUsesTheWorkerClockToo: the chain's time is ahead of the wall clock, nothing to show");
            return;
        }
        const Uint256 k = NewKey(a, p, wall + 2);
        CPPUNIT_ASSERT(C().ResolveKey(k)->valid);
        std::this_thread::sleep_for(3s);
        // No block mined since: the contract's own view still calls the key live...
        CPPUNIT_ASSERT(LatestBlockTime() < wall + 2);
        CPPUNIT_ASSERT(C().KeyHasScope(k, Scope::CreateGroups, 0).value());
        // ...the client's clock does not.
        CPPUNIT_ASSERT(!C().ResolveKey(k)->valid);
    }

    void testDirectWriteVisibleWithinFiveSeconds() {
        // A ChainSecured account whose admin wallet writes straight to the contract.
        common::PrivateKey admin_key = common::PrivateKey::Generate();
        const Address20 admin = admin_key.Address();
        CPPUNIT_ASSERT(m_stack->rpc
                           .CallForResult("anvil_setBalance", "[\"" + common::HexEncode(admin, true) +
                                                                  "\",\"0x56bc75e2d63100000\"]")
                           .ok());
        const Uint256 a = NewAccount();
        CPPUNIT_ASSERT(C().ConvertToChainSecuredAccount(a, admin).ok());
        // The service's reader caches for 60 s: only the event watcher can make the write visible.
        test::ChainStack service(Chain(), test::DevKey(2), 60000ms);
        CPPUNIT_ASSERT(service.client.ListGroups(a, Page{0, 10})->empty());
        CPPUNIT_ASSERT(service.client.ListGroups(a, Page{0, 10})->empty());  // cached now
        test::ChainStack wallet(Chain(), std::move(admin_key), 0ms);
        auto g = wallet.client.AddGroup(a, Uint256(), "direct", "by the admin wallet", {}, {});
        CPPUNIT_ASSERT_MESSAGE(g.ok() ? "" : g.error().message, g.ok());
        const auto start = std::chrono::steady_clock::now();
        bool seen = false;
        while (!seen && std::chrono::steady_clock::now() - start < 5s) {
            auto groups = service.client.ListGroups(a, Page{0, 10});
            seen = groups.ok() && groups->size() == 1 && (*groups)[0].name == "direct";
            if (!seen) std::this_thread::sleep_for(50ms);
        }
        CPPUNIT_ASSERT_MESSAGE("direct-path write not visible within 5 s", seen);
    }

    void testListsPageAndCarryFields() {
        const Uint256 a = NewAccount();
        std::set<std::string> names;
        for (int i = 0; i < 5; ++i) {
            auto g = C().AddGroup(a, a, "group" + std::to_string(i), "desc" + std::to_string(i), {}, {});
            CPPUNIT_ASSERT(g.ok());
        }
        auto p0 = C().ListGroups(a, Page{0, 2});
        auto p1 = C().ListGroups(a, Page{1, 2});
        auto p2 = C().ListGroups(a, Page{2, 2});
        auto p3 = C().ListGroups(a, Page{3, 2});
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, p0->size());
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, p1->size());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, p2->size());
        CPPUNIT_ASSERT(p3->empty());
        for (const auto* page : {&*p0, &*p1, &*p2}) {
            for (const auto& g : *page) {
                names.insert(g.name);
                CPPUNIT_ASSERT_EQUAL("desc" + g.name.substr(5), g.description);
            }
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, names.size());
        Permissions p;
        p.execute_in_groups = {1, 2};
        const Uint256 k = NewKey(a, p);
        auto keys = C().ListUsageKeys(a, Page{0, 10});
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, keys->size());
        CPPUNIT_ASSERT((*keys)[0].key_hash == k);
        CPPUNIT_ASSERT((*keys)[0].permissions.execute_in_groups == (std::vector<std::uint64_t>{1, 2}));
        const Address20 pkp = NewPkp(a);
        auto wallets = C().ListWallets(a, Page{0, 10});
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, wallets->size());
        CPPUNIT_ASSERT((*wallets)[0].address == pkp);
        auto payers = C().GetApiPayers();
        CPPUNIT_ASSERT(payers.ok() && !payers->empty());
        CPPUNIT_ASSERT(std::find(payers->begin(), payers->end(), m_stack->signer.Address()) != payers->end());
    }

    void testPageLargerThanOneViewCallIsAssembled() {
        // A group with a 4096-byte description is 135 storage words: one view call (PAGE_WORD_BUDGET
        // 4096 words) holds 30 of them, so pages of 35 take two calls and must still come back whole.
        const Uint256 a = NewAccount();
        const int kGroups = 40;
        for (int i = 1; i <= kGroups; ++i) {
            std::string description = "group " + std::to_string(i) + " ";
            description.resize(4096, '.');
            auto g = C().AddGroup(a, a, "g" + std::to_string(i), description, {}, {});
            CPPUNIT_ASSERT_MESSAGE(g.ok() ? "" : g.error().message, g.ok());
        }
        auto p0 = C().ListGroups(a, Page{0, 35});
        auto p1 = C().ListGroups(a, Page{1, 35});
        auto p2 = C().ListGroups(a, Page{2, 35});
        CPPUNIT_ASSERT_MESSAGE(p0.ok() ? "" : p0.error().message, p0.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{35}, p0->size());
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, p1->size());
        CPPUNIT_ASSERT(p2->empty());
        std::uint64_t want = 1;
        for (const auto* page : {&*p0, &*p1}) {
            for (const auto& g : *page) {
                CPPUNIT_ASSERT_EQUAL(want, g.id);
                CPPUNIT_ASSERT_EQUAL("g" + std::to_string(want), g.name);
                CPPUNIT_ASSERT_EQUAL(std::size_t{4096}, g.description.size());
                ++want;
            }
        }
    }

    void testErrorTableMatchesCompiledAbi() {
        rapidjson::Document abi;
        const std::string text = test::ReadFile(test::BinaryPath("contracts/AccountConfig.abi.json"));
        abi.Parse(text.c_str());
        CPPUNIT_ASSERT(abi.IsArray());
        std::set<std::string> compiled;
        for (const auto& e : abi.GetArray()) {
            if (std::string(e["type"].GetString()) != "error") continue;
            std::string sig = std::string(e["name"].GetString()) + "(";
            bool first = true;
            for (const auto& in : e["inputs"].GetArray()) {
                if (!first) sig += ",";
                sig += in["type"].GetString();
                first = false;
            }
            compiled.insert(sig + ")");
        }
        const auto& ours = ContractErrorSignatures();
        const std::set<std::string> mapped(ours.begin(), ours.end());
        CPPUNIT_ASSERT_MESSAGE("every contract error must map to an HTTP status", compiled == mapped);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(AccountConfigTests);
