// The evidence set's contents (sha256sum format, report_data) and its publication by one rename.
#include <cppunit/extensions/HelperMacros.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/hex.h"
#include "evidence/evidence_files.h"

using namespace sigil;
using namespace sigil::evidence;
namespace fs = std::filesystem;

namespace {

const std::string CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

std::string ReadAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

class EvidenceFilesTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(EvidenceFilesTests);
    CPPUNIT_TEST(testCoveredFilesAndSha256SumFormat);
    CPPUNIT_TEST(testRefusesBadDomainOrCertificate);
    CPPUNIT_TEST(testReceiptKeyFile);
    CPPUNIT_TEST(testPublishSwapsWholeSetsByOneRename);
    CPPUNIT_TEST_SUITE_END();

    fs::path m_root;

public:
    void setUp() override {
        std::string tmpl = (fs::temp_directory_path() / "sigil-evidence-XXXXXX").string();
        CPPUNIT_ASSERT(::mkdtemp(tmpl.data()) != nullptr);
        m_root = tmpl;
    }
    void tearDown() override { fs::remove_all(m_root); }

    void testCoveredFilesAndSha256SumFormat() {
        auto files = CoveredFiles("sigil.example.com", CERT, "https://acme.example/acct/42");
        CPPUNIT_ASSERT(files.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("cert-sigil.example.com.pem"), (*files)[0].name);
        CPPUNIT_ASSERT_EQUAL(CERT, (*files)[0].bytes);
        CPPUNIT_ASSERT_EQUAL(std::string("acme-account.json"), (*files)[1].name);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"uri\":\"https://acme.example/acct/42\"}\n"), (*files)[1].bytes);
        // Known answers: `printf 'abc' | sha256sum` and `printf '' | sha256sum`.
        const std::string sums = Sha256SumText({{"a.txt", "abc"}, {"empty", ""}});
        CPPUNIT_ASSERT_EQUAL(std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  a.txt\n"
                                         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty\n"),
                             sums);
    }

    void testReceiptKeyFile() {
        sigil::common::Address20 address;
        address.fill(0xab);
        const std::uint8_t pub[3] = {0x04, 0x01, 0x02};
        const EvidenceFile f = ReceiptKeyFile(address, pub);
        CPPUNIT_ASSERT_EQUAL(std::string("receipt-key.json"), f.name);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"address\":\"0x") + "abababababababababababababababababababab" +
                                 "\",\"public_key\":\"0x040102\"}\n",
                             f.bytes);
    }

    void testRefusesBadDomainOrCertificate() {
        for (const char* bad : {"", "../etc", "a/b", ".hidden", "x y"}) {
            auto r = CoveredFiles(bad, CERT, "u");
            CPPUNIT_ASSERT_MESSAGE(bad, !r.ok() && r.error().code == "invalid_domain");
        }
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_certificate"), CoveredFiles("d", "not a pem", "u").error().code);
    }

    void testPublishSwapsWholeSetsByOneRename() {
        const fs::path dir = m_root / "evidences";
        // A real directory from an earlier layout is moved aside, then replaced by the symlink.
        fs::create_directories(dir);
        std::ofstream(dir / "old.txt") << "old";
        CPPUNIT_ASSERT(PublishEvidenceSet(dir.string(), {{"a.txt", "one"}, {"b.txt", "two"}}).ok());
        CPPUNIT_ASSERT(fs::is_symlink(dir));
        CPPUNIT_ASSERT_EQUAL(std::string("one"), ReadAll(dir / "a.txt"));
        CPPUNIT_ASSERT(!fs::exists(dir / "old.txt"));
        const fs::path first = fs::read_symlink(dir);

        CPPUNIT_ASSERT(PublishEvidenceSet(dir.string(), {{"a.txt", "three"}}).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("three"), ReadAll(dir / "a.txt"));
        CPPUNIT_ASSERT(!fs::exists(dir / "b.txt"));  // a set is whole: nothing of the old one shows
        CPPUNIT_ASSERT(fs::exists(first / "a.txt"));  // the replaced set stays for readers in flight
        CPPUNIT_ASSERT(PublishEvidenceSet(dir.string(), {{"a.txt", "four"}}).ok());
        CPPUNIT_ASSERT(!fs::exists(first));  // but not longer
        std::size_t sets = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(m_root / ".evidences.sets")) ++sets;
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, sets);
        CPPUNIT_ASSERT(!fs::exists(m_root / ".evidences.new"));
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(EvidenceFilesTests);
