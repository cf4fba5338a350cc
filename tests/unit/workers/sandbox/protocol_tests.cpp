#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "workers/sandbox/protocol/protocol.h"

using namespace sigil::common;
using namespace sigil::workers;

class SandboxProtocolTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxProtocolTests);
    CPPUNIT_TEST(testRoundTripsEveryMessage);
    CPPUNIT_TEST(testKnownEncoding);
    CPPUNIT_TEST(testReaderSplitsByteByByte);
    CPPUNIT_TEST(testRejectsOversizedFrameFromHeader);
    CPPUNIT_TEST(testRejectsEmptyFrame);
    CPPUNIT_TEST(testRejectsMalformedPayloads);
    CPPUNIT_TEST(testEncoderRefusesOverCap);
    CPPUNIT_TEST(testRunCarriesModules);
    CPPUNIT_TEST_SUITE_END();

    static SandboxMessage RoundTrip(const SandboxMessage& m) {
        auto frame = EncodeSandboxMessage(m);
        CPPUNIT_ASSERT(frame.ok());
        SandboxFrameReader reader;
        CPPUNIT_ASSERT(reader.Feed(*frame).ok());
        auto next = reader.Next();
        CPPUNIT_ASSERT(next.ok() && next->has_value());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, reader.Pending());
        return std::move(**next);
    }

public:
    void testRunCarriesModules() {
        SandboxRun sent{"x", "{}", 1, 1, false, "QmA"};
        sent.modules = {{"QmB", "var b;", false}, {"QmC", "export const c = 1;", true}};
        auto run = std::get<SandboxRun>(RoundTrip(sent));
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, run.modules.size());
        CPPUNIT_ASSERT_EQUAL(std::string("QmB"), run.modules[0].cid);
        CPPUNIT_ASSERT_EQUAL(std::string("var b;"), run.modules[0].code);
        CPPUNIT_ASSERT(!run.modules[0].lower && run.modules[1].lower);
        CPPUNIT_ASSERT_EQUAL(std::string("export const c = 1;"), run.modules[1].code);
        CPPUNIT_ASSERT(std::get<SandboxRun>(RoundTrip(SandboxRun{"x", "{}", 1, 1, false})).modules.empty());
        auto lowered = std::get<SandboxModuleLowered>(RoundTrip(SandboxModuleLowered{"QmC", "var c;"}));
        CPPUNIT_ASSERT_EQUAL(std::string("QmC"), lowered.cid);
        CPPUNIT_ASSERT_EQUAL(std::string("var c;"), lowered.code);
        // More modules than a run may carry is a malformed message, refused before any is kept.
        SandboxRun many{"x", "{}", 1, 1, false, ""};
        many.modules.resize(SANDBOX_MAX_MODULES + 1);
        auto frame = EncodeSandboxMessage(many);
        CPPUNIT_ASSERT(frame.ok());
        SandboxFrameReader reader;
        CPPUNIT_ASSERT(reader.Feed(*frame).ok());
        CPPUNIT_ASSERT(!reader.Next().ok());
        // A run with the largest modules it may import still fits a frame.
        SandboxRun big{std::string(16u << 20, 'x'), "{}", 1, 1, false, ""};
        big.modules.push_back({"QmB", std::string(SANDBOX_MAX_MODULE_BYTES, 'm'), false});
        CPPUNIT_ASSERT(EncodeSandboxMessage(big).ok());
    }
    void testRoundTripsEveryMessage() {
        auto run = std::get<SandboxRun>(RoundTrip(SandboxRun{"function main(){}", "{\"a\":1}", 30000, 64u << 20, true}));
        CPPUNIT_ASSERT(run.lower);
        CPPUNIT_ASSERT(!std::get<SandboxRun>(RoundTrip(SandboxRun{"x", "{}", 1, 1, false})).lower);
        CPPUNIT_ASSERT_EQUAL(std::string("var a = 1;"), std::get<SandboxLowered>(RoundTrip(SandboxLowered{"var a = 1;"})).code);
        CPPUNIT_ASSERT_EQUAL(std::string("function main(){}"), run.code);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"a\":1}"), run.params_json);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{30000}, run.time_ms);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{64u << 20}, run.memory_bytes);
        auto who = std::get<SandboxRun>(RoundTrip(SandboxRun{"x", "{}", 1, 1, false, "Qm", "{\"apiKeyHash\":\"0x1\"}"}));
        CPPUNIT_ASSERT_EQUAL(std::string("Qm"), who.cid);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"apiKeyHash\":\"0x1\"}"), who.caller_json);
        auto op = std::get<SandboxOp>(RoundTrip(SandboxOp{"signEcdsa", "{}"}));
        CPPUNIT_ASSERT_EQUAL(std::string("signEcdsa"), op.name);
        CPPUNIT_ASSERT_EQUAL(std::string("{}"), op.args_json);
        auto res = std::get<SandboxOpResult>(RoundTrip(SandboxOpResult{false, "refused"}));
        CPPUNIT_ASSERT(!res.ok);
        CPPUNIT_ASSERT_EQUAL(std::string("refused"), res.value);
        CPPUNIT_ASSERT(std::get<SandboxOpResult>(RoundTrip(SandboxOpResult{true, "1"})).ok);
        auto log = std::get<SandboxLog>(RoundTrip(SandboxLog{std::string("a\0b", 3)}));
        CPPUNIT_ASSERT_EQUAL(std::string("a\0b", 3), log.text);
        auto done = std::get<SandboxDone>(RoundTrip(SandboxDone{false, "", {"TypeError", "x", "at main"}}));
        CPPUNIT_ASSERT(!done.ok);
        CPPUNIT_ASSERT_EQUAL(std::string("TypeError"), done.error.code);
        CPPUNIT_ASSERT_EQUAL(std::string("at main"), done.error.stack);
    }
    void testKnownEncoding() {
        auto frame = EncodeSandboxMessage(SandboxLog{"hi"});
        CPPUNIT_ASSERT(frame.ok());
        const Bytes expected = {0, 0, 0, 7, 4, 0, 0, 0, 2, 'h', 'i'};
        CPPUNIT_ASSERT(expected == *frame);
        auto ok = EncodeSandboxMessage(SandboxOpResult{true, ""});
        const Bytes expected_ok = {0, 0, 0, 10, 3, 0, 0, 0, 1, 1, 0, 0, 0, 0};
        CPPUNIT_ASSERT(expected_ok == *ok);
    }
    void testReaderSplitsByteByByte() {
        Bytes stream;
        for (const SandboxMessage& m : {SandboxMessage{SandboxLog{"one"}}, SandboxMessage{SandboxOp{"n", "[]"}}}) {
            auto f = EncodeSandboxMessage(m);
            stream.insert(stream.end(), f->begin(), f->end());
        }
        SandboxFrameReader reader;
        int seen = 0;
        for (std::uint8_t b : stream) {
            CPPUNIT_ASSERT(reader.Feed(ByteView(&b, 1)).ok());
            for (;;) {
                auto next = reader.Next();
                CPPUNIT_ASSERT(next.ok());
                if (!next->has_value()) break;
                ++seen;
            }
        }
        CPPUNIT_ASSERT_EQUAL(2, seen);
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, reader.Pending());
    }
    void testRejectsOversizedFrameFromHeader() {
        SandboxFrameReader reader(SANDBOX_MAX_CHILD_PAYLOAD);
        const std::uint32_t len = SANDBOX_MAX_CHILD_PAYLOAD + 1;
        const Bytes header = {std::uint8_t(len >> 24), std::uint8_t(len >> 16), std::uint8_t(len >> 8), std::uint8_t(len)};
        auto st = reader.Feed(header);
        CPPUNIT_ASSERT(!st.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), st.error().code);
        CPPUNIT_ASSERT(!reader.Next().ok());
        CPPUNIT_ASSERT(!reader.Feed(Bytes{1}).ok());  // stays failed
    }
    void testRejectsEmptyFrame() {
        SandboxFrameReader reader;
        auto st = reader.Feed(Bytes{0, 0, 0, 0});
        CPPUNIT_ASSERT(!st.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_empty"), st.error().code);
    }
    void testRejectsMalformedPayloads() {
        const Bytes bad[] = {
            {},                                      // no type
            {9},                                     // unknown type
            {4},                                     // LOG without its field
            {4, 0, 0, 0, 3, 'a'},                    // field longer than the payload
            {4, 0, 0, 0, 1, 'a', 0},                 // trailing byte
            {3, 0, 0, 0, 1, 2, 0, 0, 0, 0},          // boolean 2
            {3, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0},       // boolean of 2 bytes
            {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0},  // short u64
        };
        for (const auto& payload : bad) {
            auto r = DecodeSandboxPayload(payload);
            CPPUNIT_ASSERT(!r.ok());
            CPPUNIT_ASSERT_EQUAL(std::string("malformed_message"), r.error().code);
        }
    }
    void testEncoderRefusesOverCap() {
        auto r = EncodeSandboxMessage(SandboxLog{std::string(100, 'x')}, 50);
        CPPUNIT_ASSERT(!r.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), r.error().code);
        CPPUNIT_ASSERT(EncodeSandboxMessage(SandboxLog{std::string(45, 'x')}, 50).ok());  // 1 + 4 + 45 = 50
        CPPUNIT_ASSERT(!EncodeSandboxMessage(SandboxLog{std::string(46, 'x')}, 50).ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxProtocolTests);
