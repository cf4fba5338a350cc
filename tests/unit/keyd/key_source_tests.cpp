#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "keyd/key_source.h"
#include "keyd/options.h"

using namespace sigil::common;
using namespace sigil::keyd;

namespace {

std::string MakeTempDir() {
    char tmpl[] = "/tmp/sigil-keyd-src-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    CPPUNIT_ASSERT(dir != nullptr);
    return dir;
}

void WriteFile(const std::string& path, std::size_t size, mode_t mode) {
    std::ofstream(path, std::ios::binary) << std::string(size, 'k');
    CPPUNIT_ASSERT_EQUAL(0, ::chmod(path.c_str(), mode));
}

mode_t ModeOf(const std::string& path) {
    struct stat st {};
    CPPUNIT_ASSERT_EQUAL(0, ::stat(path.c_str(), &st));
    return st.st_mode & 07777;
}

}  // namespace

class KeySourceTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(KeySourceTests);
    CPPUNIT_TEST(testCreatesMissingKeyWithMode0600);
    CPPUNIT_TEST(testReadsExistingKey);
    CPPUNIT_TEST(testRefusesGroupOrWorldReadableKey);
    CPPUNIT_TEST(testRefusesWrongSize);
    CPPUNIT_TEST(testRefusesSymlinkAndDirectory);
    CPPUNIT_TEST(testParsesCommandLine);
    CPPUNIT_TEST(testRefusesBadCommandLines);
    CPPUNIT_TEST_SUITE_END();

    std::string m_dir;

public:
    void setUp() override { m_dir = MakeTempDir(); }
    void tearDown() override { std::system(("rm -rf '" + m_dir + "'").c_str()); }

    void testCreatesMissingKeyWithMode0600() {
        const std::string path = m_dir + "/root.key";
        const mode_t old = ::umask(0);  // a permissive umask must not widen the file
        auto key = FileKeySource(path).LoadRootKey();
        ::umask(old);
        CPPUNIT_ASSERT(key.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{32}, key->size());
        CPPUNIT_ASSERT_EQUAL(static_cast<mode_t>(0600), ModeOf(path));
        // Loading again yields the same key.
        auto again = FileKeySource(path).LoadRootKey();
        CPPUNIT_ASSERT(again.ok() && ConstantTimeEqual(key->view(), again->view()));
        // Another fresh file holds another key.
        auto other = FileKeySource(m_dir + "/other.key").LoadRootKey();
        CPPUNIT_ASSERT(!ConstantTimeEqual(key->view(), other->view()));
    }

    void testReadsExistingKey() {
        const std::string path = m_dir + "/root.key";
        WriteFile(path, 32, 0400);
        auto key = FileKeySource(path).LoadRootKey();
        CPPUNIT_ASSERT(key.ok());
        CPPUNIT_ASSERT(ConstantTimeEqual(key->view(), AsBytes(std::string(32, 'k'))));
    }

    void testRefusesGroupOrWorldReadableKey() {
        const std::string path = m_dir + "/root.key";
        for (mode_t mode : {0644, 0640, 0604, 0660, 0602}) {
            WriteFile(path, 32, mode);
            auto key = FileKeySource(path).LoadRootKey();
            CPPUNIT_ASSERT(!key.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("root_key_insecure_mode"), key.error().code);
        }
        CPPUNIT_ASSERT_EQUAL(static_cast<mode_t>(0602), ModeOf(path));  // refused, never repaired
    }

    void testRefusesWrongSize() {
        const std::string path = m_dir + "/root.key";
        for (std::size_t size : {0, 31, 33, 64}) {
            WriteFile(path, size, 0600);
            auto key = FileKeySource(path).LoadRootKey();
            CPPUNIT_ASSERT(!key.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("root_key_bad_size"), key.error().code);
        }
    }

    void testRefusesSymlinkAndDirectory() {
        const std::string target = m_dir + "/real.key", link = m_dir + "/link.key";
        WriteFile(target, 32, 0600);
        CPPUNIT_ASSERT_EQUAL(0, ::symlink(target.c_str(), link.c_str()));
        CPPUNIT_ASSERT_EQUAL(std::string("root_key_not_regular"), FileKeySource(link).LoadRootKey().error().code);
        CPPUNIT_ASSERT_EQUAL(0, ::mkdir((m_dir + "/dir.key").c_str(), 0700));
        CPPUNIT_ASSERT(!FileKeySource(m_dir + "/dir.key").LoadRootKey().ok());
        // A missing parent directory is an error, not a silent mkdir.
        CPPUNIT_ASSERT_EQUAL(std::string("root_key_unreadable"),
                             FileKeySource(m_dir + "/none/root.key").LoadRootKey().error().code);
    }

    void testParsesCommandLine() {
        const std::vector<std::string_view> args{"--socket", "/run/sigil-keyd/keyd.sock", "--root-key-file", "/k",
                                                 "--allowed-uid", "0", "--allowed-uid", "1000", "--chain-id", "31337",
                                                 "--contract", "0x5FbDB2315678afecb367f032d93F642f64180aa3",
                                                 "--payers", "8"};
        auto o = ParseKeydOptions(args);
        CPPUNIT_ASSERT(o.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("/run/sigil-keyd/keyd.sock"), o->socket_path);
        CPPUNIT_ASSERT(o->allowed_uids == std::vector<uid_t>({0, 1000}));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{31337}, o->chain_id);
        CPPUNIT_ASSERT_EQUAL(std::uint32_t{8}, o->payers);
        CPPUNIT_ASSERT_EQUAL(std::uint8_t{0x5f}, o->contract[0]);
        CPPUNIT_ASSERT(!o->socket_group.has_value());
    }

    void testRefusesBadCommandLines() {
        const std::vector<std::string_view> base{"--socket", "/s", "--root-key-file", "/k", "--allowed-uid", "0",
                                                 "--chain-id", "1", "--contract",
                                                 "0x5fbdb2315678afecb367f032d93f642f64180aa3"};
        CPPUNIT_ASSERT(ParseKeydOptions(base).ok());
        auto with = [&](std::vector<std::string_view> extra) {
            std::vector<std::string_view> a = base;
            a.insert(a.end(), extra.begin(), extra.end());
            return ParseKeydOptions(a);
        };
        CPPUNIT_ASSERT(!with({"--payers", "1025"}).ok());
        CPPUNIT_ASSERT(!with({"--payers"}).ok());
        CPPUNIT_ASSERT(!with({"--bogus", "1"}).ok());
        CPPUNIT_ASSERT(!with({"--tee-key-service", "x"}).ok());  // two key sources
        CPPUNIT_ASSERT(!with({"--allowed-uid", "-1"}).ok());
        CPPUNIT_ASSERT(!with({"--chain-id", "0"}).ok());
        CPPUNIT_ASSERT(!with({"--max-fee-per-gas", "0"}).ok());
        CPPUNIT_ASSERT(!with({"--max-gas-limit", "x"}).ok());
        auto caps = with({"--max-fee-per-gas", "7", "--max-priority-fee-per-gas", "2", "--max-gas-limit", "90000"});
        CPPUNIT_ASSERT(caps.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{7}, caps->max_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, caps->max_priority_fee_per_gas);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{90000}, caps->max_gas_limit);
        CPPUNIT_ASSERT(!with({"--contract", "0x5FbDB2315678afecb367f032d93F642f64180aA3"}).ok());  // bad checksum
        const std::vector<std::string_view> no_uid{"--socket", "/s", "--root-key-file", "/k", "--chain-id", "1",
                                                   "--contract", "0x5fbdb2315678afecb367f032d93f642f64180aa3"};
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_arguments"), ParseKeydOptions(no_uid).error().code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(KeySourceTests);
