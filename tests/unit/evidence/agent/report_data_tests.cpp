// The report_data values the service asks the agent to bind: known answers (sha256sum/sha512sum of
// the same bytes), and the domain separation between nonce quotes and the evidence quote.
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "common/hex.h"
#include "evidence/agent/report_data.h"

using namespace sigil;
using namespace sigil::evidence;

class ReportDataTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ReportDataTests);
    CPPUNIT_TEST(testEvidenceReportDataIsSha256OfTheSumsPadded);
    CPPUNIT_TEST(testNonceReportDataIsLabelledSha512);
    CPPUNIT_TEST(testNonceNeverYieldsTheEvidenceValue);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEvidenceReportDataIsSha256OfTheSumsPadded() {
        // `printf 'abc' | sha256sum`
        const common::Bytes rd = EvidenceReportData("abc");
        CPPUNIT_ASSERT_EQUAL(std::size_t{64}, rd.size());
        CPPUNIT_ASSERT_EQUAL(std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") +
                                 std::string(64, '0'),
                             common::HexEncode(rd));
    }

    void testNonceReportDataIsLabelledSha512() {
        // `printf 'sigil/attestation-nonce/v1\x01\x02' | sha512sum`
        const common::Bytes nonce = {0x01, 0x02};
        CPPUNIT_ASSERT_EQUAL(std::string("7bc07c5858cfe256bcb1faf5b63b71d766517804a67f5881af39a260e3533927"
                                         "15d8ae9914a2f877423aeafde11a7926f48ac15bbe7fabe157f1d84960d4dbe2"),
                             common::HexEncode(NonceReportData(nonce)));
        // `printf 'sigil/attestation-nonce/v1' | sha512sum`: the empty nonce is still labelled.
        CPPUNIT_ASSERT_EQUAL(std::string("c4311979e0d3f2063c0803dac51f59d5e1ed0da6ffb96463a717d1b2e2c6b24d"
                                         "9e37e925996d4b5af24e023509c25d6db0c07f2cc7a3af35ab92e00940556384"),
                             common::HexEncode(NonceReportData({})));
    }

    void testNonceNeverYieldsTheEvidenceValue() {
        // The attack of issue 22: ask for a nonce quote over the evidence quote's own value. The
        // answer binds something else.
        const std::string sums = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  cert-x.pem\n";
        const common::Bytes evidence = EvidenceReportData(sums);
        CPPUNIT_ASSERT(NonceReportData(evidence) != evidence);
        const common::Bytes first_half(evidence.begin(), evidence.begin() + 32);
        CPPUNIT_ASSERT(NonceReportData(first_half) != evidence);
        CPPUNIT_ASSERT_EQUAL(std::size_t{64}, NonceReportData(first_half).size());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReportDataTests);
