// The worker's side of imports by CID (workers/actions/imports.h): the graph read from lowered
// headers, breadth first and each CID once, modules taken from the module cache or the shared
// folder (verified against their CIDs), source sent for the child to lower, the bounds, and a missing
// module named with its importer. No gateway and no sigil-lowerer here (api_imports has both).
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/cid.h"
#include "workers/actions/imports.h"

using namespace sigil::workers;
using sigil::common::ComputeCidV0;
using sigil::common::ErrorKind;

namespace {

// Lowered text as lower.js heads it.
std::string Lowered(const std::vector<std::string>& imports, const std::string& body = "var x = 1;") {
    if (imports.empty()) return body;
    std::string header = "/*sigil-imports esm";
    for (const auto& cid : imports) header += " ipfs://" + cid;
    return header + "*/" + body;
}

const std::vector<std::uint8_t> KEY = {1, 2, 3, 4};

}  // namespace

class ImportsResolveTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ImportsResolveTests);
    CPPUNIT_TEST(testFollowsLoweredModulesBreadthFirstOnce);
    CPPUNIT_TEST(testSourceFromTheFolderIsSentToLower);
    CPPUNIT_TEST(testMissingModuleNamesItsImporter);
    CPPUNIT_TEST(testBoundsOnCountAndSize);
    CPPUNIT_TEST(testNothingForSourceOrNoHeader);
    CPPUNIT_TEST(testLoweredModulesKeptApartFromActions);
    CPPUNIT_TEST_SUITE_END();

    std::string m_dir;
    ActionSettings m_settings;

public:
    void setUp() override {
        char tmpl[] = "/tmp/sigil-imports-unit-XXXXXX";
        m_dir = ::mkdtemp(tmpl);
        m_settings = ActionSettings{};
        m_settings.code_cache_dir = m_dir;
    }
    void tearDown() override { std::filesystem::remove_all(m_dir); }

    void testFollowsLoweredModulesBreadthFirstOnce() {
        CodeCache modules(100);
        const std::string leaf = ComputeCidV0("leaf"), left = ComputeCidV0("left"), right = ComputeCidV0("right");
        modules.Put(leaf, {Lowered({}), true});
        modules.Put(left, {Lowered({leaf}), true});
        modules.Put(right, {Lowered({leaf, left}), true});
        auto got = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered({left, right}), true, 1000);
        CPPUNIT_ASSERT_MESSAGE(got.ok() ? "" : got.error().message, got.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{3}, got->size());
        CPPUNIT_ASSERT_EQUAL(left, (*got)[0].cid);
        CPPUNIT_ASSERT_EQUAL(right, (*got)[1].cid);
        CPPUNIT_ASSERT_EQUAL(leaf, (*got)[2].cid);
        for (const auto& m : *got) CPPUNIT_ASSERT(!m.lower);
    }

    void testSourceFromTheFolderIsSentToLower() {
        CodeCache modules(100);
        const std::string source = "export const a = 1;";
        const std::string cid = ComputeCidV0(source);
        std::ofstream(m_dir + "/" + cid) << source;
        // A planted file that does not hash to its name is not taken.
        const std::string planted = ComputeCidV0("honest");
        std::ofstream(m_dir + "/" + planted) << "evil";
        auto got = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered({cid}), true, 1000);
        CPPUNIT_ASSERT(got.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, got->size());
        CPPUNIT_ASSERT((*got)[0].lower);
        CPPUNIT_ASSERT_EQUAL(source, (*got)[0].code);
        auto refused = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered({planted}), true, 1000);
        CPPUNIT_ASSERT(!refused.ok());
    }

    void testMissingModuleNamesItsImporter() {
        CodeCache modules(100);
        const std::string mid = ComputeCidV0("mid"), gone = ComputeCidV0("gone");
        modules.Put(mid, {Lowered({gone}), true});
        auto got = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered({mid}), true, 1000);
        CPPUNIT_ASSERT(!got.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("ipfs_unavailable"), got.error().code);
        CPPUNIT_ASSERT_MESSAGE(got.error().message,
                               got.error().message.find("the module ipfs://" + gone + " imported by " + mid) != std::string::npos);
    }

    void testBoundsOnCountAndSize() {
        CodeCache modules(1000);
        std::vector<std::string> many;
        for (int i = 0; i <= static_cast<int>(SANDBOX_MAX_MODULES); ++i) {
            many.push_back(ComputeCidV0("m" + std::to_string(i)));
            modules.Put(many.back(), {Lowered({}), true});
        }
        auto over = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered(many), true, 1000);
        CPPUNIT_ASSERT(!over.ok());
        CPPUNIT_ASSERT(over.error().kind == ErrorKind::TooLarge);
        CPPUNIT_ASSERT_EQUAL(std::string("imports_too_large"), over.error().code);
        many.pop_back();
        CPPUNIT_ASSERT(ResolveModules(m_settings, modules, KEY, "QmAction", Lowered(many), true, 1000).ok());

        const std::string big = ComputeCidV0("big");
        modules.Put(big, {std::string(SANDBOX_MAX_MODULE_BYTES / 2 + 1, ' '), true});
        const std::string big2 = ComputeCidV0("big2");
        modules.Put(big2, {std::string(SANDBOX_MAX_MODULE_BYTES / 2 + 1, ' '), true});
        auto heavy = ResolveModules(m_settings, modules, KEY, "QmAction", Lowered({big, big2}), true, 1000);
        CPPUNIT_ASSERT(!heavy.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("imports_too_large"), heavy.error().code);
    }

    void testNothingForSourceOrNoHeader() {
        CodeCache modules(10);
        // Source says nothing of its imports (the child lowers it and reports); lowered text without a
        // header imports nothing.
        auto source = ResolveModules(m_settings, modules, KEY, "QmAction", "import x from \"ipfs://Qm...\"", false, 1000);
        CPPUNIT_ASSERT(source.ok() && source->empty());
        auto plain = ResolveModules(m_settings, modules, KEY, "QmAction", "var main = function () {};", true, 1000);
        CPPUNIT_ASSERT(plain.ok() && plain->empty());
    }

    void testLoweredModulesKeptApartFromActions() {
        CodeCache modules(10);
        const std::string cid = ComputeCidV0("export const k = 1;");
        KeepLoweredModule(m_settings, modules, KEY, cid, Lowered({}, "__sigil_exports.k = 1;"));
        CPPUNIT_ASSERT(std::filesystem::exists(m_dir + "/" + cid + ".module.lowered"));
        CPPUNIT_ASSERT(!std::filesystem::exists(m_dir + "/" + cid + ".lowered"));
        CPPUNIT_ASSERT(!ReadLoweredCode(m_settings, cid, KEY).has_value());
        // Another worker (an empty memory cache) takes it from the folder, checked by its MAC.
        CodeCache other(10);
        auto got = ResolveModules(m_settings, other, KEY, "QmAction", Lowered({cid}), true, 1000);
        CPPUNIT_ASSERT(got.ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, got->size());
        CPPUNIT_ASSERT(!(*got)[0].lower);
        CPPUNIT_ASSERT_EQUAL(std::string("__sigil_exports.k = 1;"), (*got)[0].code);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ImportsResolveTests);
