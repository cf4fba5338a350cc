#include <cppunit/extensions/HelperMacros.h>

#include <cstring>

#include "common/ipc_frame.h"

using namespace sigil::common;

namespace {

Bytes Frame(std::uint32_t length, ByteView payload) {
    Bytes out(IPC_HEADER_SIZE + payload.size());
    for (int i = 0; i < 4; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(length >> (24 - 8 * i));
    if (!payload.empty()) std::memcpy(out.data() + IPC_HEADER_SIZE, payload.data(), payload.size());
    return out;
}

Bytes Frame(ByteView payload) { return Frame(static_cast<std::uint32_t>(payload.size()), payload); }

}  // namespace

class IpcFrameTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(IpcFrameTests);
    CPPUNIT_TEST(testDecodesOneFrame);
    CPPUNIT_TEST(testRejectsOversizedFrameFromHeaderAlone);
    CPPUNIT_TEST(testAcceptsFrameAtExactCap);
    CPPUNIT_TEST(testRejectsZeroLengthFrame);
    CPPUNIT_TEST(testTruncatedFrameStaysPending);
    CPPUNIT_TEST(testSplitsPipelinedFramesFedByteByByte);
    CPPUNIT_TEST(testChecksHeaderOfPipelinedFrame);
    CPPUNIT_TEST(testRefusesMoreThanSpace);
    CPPUNIT_TEST(testFailedDecoderStaysFailed);
    CPPUNIT_TEST(testGrowingDecoderStartsSmallAndKeepsTheCap);
    CPPUNIT_TEST(testReaderRejectsMalformedFields);
    CPPUNIT_TEST_SUITE_END();

public:
    void testDecodesOneFrame() {
        FrameDecoder d;
        const Bytes payload{0x01, 0xaa};
        CPPUNIT_ASSERT(d.Feed(Frame(payload)).ok());
        auto f = d.Front();
        CPPUNIT_ASSERT(f.has_value());
        CPPUNIT_ASSERT(Bytes(f->begin(), f->end()) == payload);
        d.Pop();
        CPPUNIT_ASSERT(!d.Front());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, d.Pending());
        CPPUNIT_ASSERT_EQUAL(IPC_HEADER_SIZE + IPC_MAX_PAYLOAD, d.Space());
    }
    void testRejectsOversizedFrameFromHeaderAlone() {
        // Only the 4 header bytes are sent: the cap must be enforced before any payload arrives.
        FrameDecoder d;
        auto s = d.Feed(Frame(IPC_MAX_PAYLOAD + 1, {}));
        CPPUNIT_ASSERT(!s.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), s.error().code);
        FrameDecoder huge;
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), huge.Feed(Frame(0xffffffffu, {})).error().code);
    }
    void testAcceptsFrameAtExactCap() {
        FrameDecoder d;
        Bytes payload(IPC_MAX_PAYLOAD, 0x5a);
        const Bytes frame = Frame(payload);
        CPPUNIT_ASSERT_EQUAL(d.Space(), frame.size());
        CPPUNIT_ASSERT(d.Feed(frame).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, d.Space());
        CPPUNIT_ASSERT_EQUAL(IPC_MAX_PAYLOAD, d.Front()->size());
        d.Pop();
        CPPUNIT_ASSERT_EQUAL(frame.size(), d.Space());
    }
    void testRejectsZeroLengthFrame() {
        FrameDecoder d;
        auto s = d.Feed(Frame(0, {}));
        CPPUNIT_ASSERT(!s.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_empty"), s.error().code);
        CPPUNIT_ASSERT(d.Failed());
    }
    void testTruncatedFrameStaysPending() {
        FrameDecoder d;
        Bytes frame = Frame(Bytes{0x01, 0x02, 0x03});
        frame.pop_back();
        CPPUNIT_ASSERT(d.Feed(frame).ok());
        CPPUNIT_ASSERT(!d.Front());
        CPPUNIT_ASSERT_EQUAL(frame.size(), d.Pending());
        // A partial header is pending too.
        FrameDecoder h;
        CPPUNIT_ASSERT(h.Feed(Bytes{0x00, 0x00}).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, h.Pending());
    }
    void testSplitsPipelinedFramesFedByteByByte() {
        Bytes stream = Frame(Bytes{0x01});
        const Bytes second = Frame(Bytes(300, 0x07));
        stream.insert(stream.end(), second.begin(), second.end());
        FrameDecoder d;
        for (std::uint8_t b : stream) CPPUNIT_ASSERT(d.Feed(ByteView(&b, 1)).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, d.Front()->size());
        d.Pop();
        CPPUNIT_ASSERT_EQUAL(std::size_t{300}, d.Front()->size());
        CPPUNIT_ASSERT((*d.Front())[299] == 0x07);
        d.Pop();
        CPPUNIT_ASSERT(!d.Front());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, d.Pending());
    }
    void testChecksHeaderOfPipelinedFrame() {
        // A good frame followed, in the same read, by the header of an oversized one.
        Bytes stream = Frame(Bytes{0x01});
        const Bytes bad = Frame(IPC_MAX_PAYLOAD + 1, {});
        stream.insert(stream.end(), bad.begin(), bad.end());
        FrameDecoder d;
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), d.Feed(stream).error().code);
        CPPUNIT_ASSERT(!d.Front());  // a failed stream yields nothing more
    }
    void testRefusesMoreThanSpace() {
        FrameDecoder d(16);
        CPPUNIT_ASSERT_EQUAL(std::size_t{20}, d.Space());
        const Bytes too_much(21, 0);
        CPPUNIT_ASSERT_EQUAL(std::string("frame_buffer_full"), d.Feed(too_much).error().code);
        // A custom cap is enforced the same way.
        FrameDecoder small(16);
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), small.Feed(Frame(17, {})).error().code);
        CPPUNIT_ASSERT(FrameDecoder(16).Feed(Frame(Bytes(16, 1))).ok());
    }
    void testGrowingDecoderStartsSmallAndKeepsTheCap() {
        // The sandbox op channel's form: a megabyte cap, a small first buffer, any feed size.
        const std::size_t cap = 1024 * 1024;
        FrameDecoder d = FrameDecoder::Growing(cap);
        CPPUNIT_ASSERT(d.Space() < 64 * 1024);
        // Two pipelined frames, the second far larger than the first buffer, in one feed.
        Bytes stream = Frame(Bytes{0x01});
        const Bytes big = Frame(Bytes(cap, 0x3c));
        stream.insert(stream.end(), big.begin(), big.end());
        CPPUNIT_ASSERT(d.Feed(stream).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, d.Front()->size());
        d.Pop();
        CPPUNIT_ASSERT_EQUAL(cap, d.Front()->size());
        CPPUNIT_ASSERT((*d.Front())[cap - 1] == 0x3c);
        d.Pop();
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, d.Pending());
        // A header above the cap fails from its 4 bytes, before anything is buffered for it.
        FrameDecoder g = FrameDecoder::Growing(cap);
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), g.Feed(Frame(cap + 1, {})).error().code);
        CPPUNIT_ASSERT(g.Failed());
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), g.failure().code);
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, g.Space());
        // Byte by byte works too (the buffer grows as the header announces).
        FrameDecoder h = FrameDecoder::Growing(cap);
        const Bytes mid = Frame(Bytes(10000, 0x11));
        for (std::uint8_t b : mid) CPPUNIT_ASSERT(h.Feed(ByteView(&b, 1)).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{10000}, h.Front()->size());
    }
    void testFailedDecoderStaysFailed() {
        FrameDecoder d;
        CPPUNIT_ASSERT(!d.Feed(Frame(0, {})).ok());
        CPPUNIT_ASSERT(!d.Feed(Frame(Bytes{0x01})).ok());
        CPPUNIT_ASSERT_EQUAL(std::size_t{0}, d.Space());
        CPPUNIT_ASSERT(!d.Front());
    }
    void testReaderRejectsMalformedFields() {
        CPPUNIT_ASSERT_EQUAL(std::string("malformed_message"), MessageReader::Open({}).error().code);
        const Bytes truncated_header{0x07, 0x00, 0x00};
        auto r = MessageReader::Open(truncated_header);
        CPPUNIT_ASSERT(r.ok());
        CPPUNIT_ASSERT(!r->GetU64().ok());
        const Bytes past_end{0x07, 0x00, 0x00, 0x00, 0x09, 1, 2, 3, 4, 5, 6, 7, 8};
        CPPUNIT_ASSERT(!MessageReader::Open(past_end)->GetBytes(100).ok());
        const Bytes huge_size{0x07, 0xff, 0xff, 0xff, 0xff, 1};
        CPPUNIT_ASSERT(!MessageReader::Open(huge_size)->GetBytes(IPC_MAX_PAYLOAD).ok());
        const Bytes seven{0x07, 0x00, 0x00, 0x00, 0x07, 1, 2, 3, 4, 5, 6, 7};
        CPPUNIT_ASSERT(!MessageReader::Open(seven)->GetU64().ok());
        CPPUNIT_ASSERT(!MessageReader::Open(seven)->GetBytes(6).ok());
        auto ok = MessageReader::Open(seven);
        CPPUNIT_ASSERT(ok->GetBytes(7).ok());
        CPPUNIT_ASSERT(ok->Finish().ok());
        auto trailing = MessageReader::Open(Bytes{0x01, 0x00});
        CPPUNIT_ASSERT(!trailing->Finish().ok());
    }

};

CPPUNIT_TEST_SUITE_REGISTRATION(IpcFrameTests);
