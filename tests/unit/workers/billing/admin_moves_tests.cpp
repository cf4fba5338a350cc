// Credit follows admin changes (workers/billing/admin_moves.h) over a real SQLite ledger: the
// balance moves once per event however often it is heard, a later credit is never swept by a
// repeat, and other logs change nothing.
#include <cppunit/extensions/HelperMacros.h>

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/hex.h"
#include "common/keccak.h"
#include "workers/billing/admin_moves.h"
#include "workers/billing/ledger.h"

using namespace sigil;
using namespace sigil::workers;
using namespace sigil::workers::billing;

namespace {

common::Hash32 AddressTopic(std::uint8_t fill) {
    common::Hash32 t{};
    std::fill(t.begin() + 12, t.end(), fill);
    return t;
}

std::string Customer(std::uint8_t fill) { return "0x" + std::string(40, "0123456789abcdef"[fill & 0xf]); }

LogEntry AdminLog(std::string_view event, std::uint8_t from, std::uint8_t to, std::string tx, std::uint64_t index) {
    LogEntry log;
    log.topics = {common::Keccak256Hash(event), common::Hash32{}, AddressTopic(from), AddressTopic(to)};
    log.tx_hash = std::move(tx);
    log.log_index = index;
    return log;
}

}  // namespace

class AdminMovesTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(AdminMovesTests);
    CPPUNIT_TEST(testTransferMovesTheBalanceOnce);
    CPPUNIT_TEST(testConversionMovesAndOtherLogsDoNot);
    CPPUNIT_TEST_SUITE_END();

    std::string m_dir;
    std::unique_ptr<Ledger> m_ledger;

public:
    void setUp() override {
        char tmpl[] = "/tmp/sigil-admin-moves-XXXXXX";
        CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
        m_dir = tmpl;
        auto opened = Ledger::Open(m_dir + "/ledger.db");
        CPPUNIT_ASSERT(opened.ok());
        m_ledger = std::move(opened).value();
    }
    void tearDown() override {
        m_ledger.reset();
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }

    void testTransferMovesTheBalanceOnce() {
        CPPUNIT_ASSERT(*m_ledger->CreditOnce(Customer(0x11), "c1", 250, "starter", "r1"));
        const LogEntry log = AdminLog("OwnershipTransferred(uint256,address,address)", 0x11, 0x22, "0xaa", 3);
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, log).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *m_ledger->Balance(Customer(0x11)));
        CPPUNIT_ASSERT_EQUAL(Cents{250}, *m_ledger->Balance(Customer(0x22)));
        // Credit the old wallet gets later (it may administer another account by then) stays there,
        // however many workers hear the same event again.
        CPPUNIT_ASSERT(*m_ledger->CreditOnce(Customer(0x11), "c2", 40, "payment", "r2"));
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, log).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{40}, *m_ledger->Balance(Customer(0x11)));
        CPPUNIT_ASSERT_EQUAL(Cents{250}, *m_ledger->Balance(Customer(0x22)));
        // An event that found nothing to move is still spent.
        const LogEntry empty = AdminLog("OwnershipTransferred(uint256,address,address)", 0x33, 0x44, "0xbb", 0);
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, empty).ok());
        CPPUNIT_ASSERT(*m_ledger->CreditOnce(Customer(0x33), "c3", 10, "payment", "r3"));
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, empty).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{10}, *m_ledger->Balance(Customer(0x33)));
        CPPUNIT_ASSERT_EQUAL(Cents{0}, *m_ledger->MoveBalanceOnce(Customer(0x33), Customer(0x44), "0xbb:0", "again"));
    }

    void testConversionMovesAndOtherLogsDoNot() {
        CPPUNIT_ASSERT(*m_ledger->CreditOnce(Customer(0x55), "c1", 70, "starter", "r1"));
        // Another event with the same topics layout, and a conversion that keeps its admin.
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, AdminLog("ConversionProposed(uint256,address,address)", 0x55, 0x66, "0x01", 0)).ok());
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, AdminLog("AccountConverted(uint256,address,address)", 0x55, 0x55, "0x02", 0)).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *m_ledger->Balance(Customer(0x55)));
        CPPUNIT_ASSERT(FollowAdminChange(*m_ledger, AdminLog("AccountConverted(uint256,address,address)", 0x55, 0x66, "0x03", 1)).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *m_ledger->Balance(Customer(0x66)));
        // A log the node gave no transaction hash cannot be keyed: refused, nothing moved.
        CPPUNIT_ASSERT(!FollowAdminChange(*m_ledger, AdminLog("AccountConverted(uint256,address,address)", 0x66, 0x77, "", 0)).ok());
        CPPUNIT_ASSERT_EQUAL(Cents{70}, *m_ledger->Balance(Customer(0x66)));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(AdminMovesTests);
