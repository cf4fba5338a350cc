// The zygote control messages: round trips, the exact bytes, and what is refused.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/socket.h>
#include <unistd.h>

#include "common/handles.h"
#include "workers/sandbox/protocol/control.h"

using namespace sigil::common;
using namespace sigil::workers;

class SandboxControlTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(SandboxControlTests);
    CPPUNIT_TEST(testRoundTrips);
    CPPUNIT_TEST(testSpawnIsOneTypeByte);
    CPPUNIT_TEST(testRejectsMalformedPackets);
    CPPUNIT_TEST(testSpawnCarriesExactlyOneDescriptor);
    CPPUNIT_TEST_SUITE_END();

    static ZygoteControl RoundTrip(const ZygoteControl& m) {
        auto back = DecodeZygoteControl(EncodeZygoteControl(m));
        CPPUNIT_ASSERT(back.ok());
        CPPUNIT_ASSERT(back->type == m.type);
        return *back;
    }

public:
    void testRoundTrips() {
        CPPUNIT_ASSERT_EQUAL(4242, RoundTrip({ZygoteControlType::Spawned, 4242, 0}).pid);
        CPPUNIT_ASSERT_EQUAL(-1, RoundTrip({ZygoteControlType::Spawned, -1, 0}).pid);
        CPPUNIT_ASSERT_EQUAL(7, RoundTrip({ZygoteControlType::Kill, 7, 0}).pid);
        const auto exited = RoundTrip({ZygoteControlType::Exited, 9, 0x8b});  // SIGSEGV with core
        CPPUNIT_ASSERT_EQUAL(9, exited.pid);
        CPPUNIT_ASSERT_EQUAL(0x8b, exited.status);
        // The child's CPU time rides along (the run CPU metric), up to the full 64 bits.
        const auto timed = RoundTrip({ZygoteControlType::Exited, 9, 0, 12345678901234ULL});
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{12345678901234ULL}, timed.cpu_us);
    }
    void testSpawnIsOneTypeByte() {
        CPPUNIT_ASSERT((EncodeZygoteControl({ZygoteControlType::Spawn, 0, 0}) == Bytes{0, 0, 0, 1, 1}));
    }
    void testRejectsMalformedPackets() {
        const Bytes kill = EncodeZygoteControl({ZygoteControlType::Kill, 7, 0});
        Bytes longer = kill;
        longer.push_back(0);  // the header no longer matches the packet
        CPPUNIT_ASSERT(!DecodeZygoteControl(longer).ok());
        CPPUNIT_ASSERT(!DecodeZygoteControl(Bytes{0, 0, 0, 1, 9}).ok());  // unknown type
        CPPUNIT_ASSERT(!DecodeZygoteControl(Bytes{0, 0, 0, 1, 3}).ok());  // KILL without a pid
        CPPUNIT_ASSERT(!DecodeZygoteControl(Bytes{0, 0, 0}).ok());
        CPPUNIT_ASSERT(!DecodeZygoteControl(EncodeZygoteControl({ZygoteControlType::Kill, -1, 0})).ok());
        CPPUNIT_ASSERT(!DecodeZygoteControl(EncodeZygoteControl({ZygoteControlType::Exited, 0, 0})).ok());
        Bytes extra = EncodeZygoteControl({ZygoteControlType::Spawn, 0, 0});
        extra[3] = 2;
        extra.push_back(0);  // a byte after the type of a field-less message
        CPPUNIT_ASSERT(!DecodeZygoteControl(extra).ok());
    }
    void testSpawnCarriesExactlyOneDescriptor() {
        int sv[2];
        CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
        UniqueFd a(sv[0]), b(sv[1]);
        CPPUNIT_ASSERT(SendZygoteControl(a.get(), {ZygoteControlType::Spawn, 0, 0}, 1));
        auto got = ReceiveZygoteControl(b.get());
        CPPUNIT_ASSERT(got.ok() && got->has_value());
        CPPUNIT_ASSERT((*got)->passed.valid());
        CPPUNIT_ASSERT(SendZygoteControl(a.get(), {ZygoteControlType::Spawn, 0, 0}));  // no descriptor
        auto bare = ReceiveZygoteControl(b.get());
        CPPUNIT_ASSERT(!bare.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("malformed_message"), bare.error().code);
        CPPUNIT_ASSERT(SendZygoteControl(a.get(), {ZygoteControlType::Kill, 5, 0}, 1));  // one too many
        CPPUNIT_ASSERT(!ReceiveZygoteControl(b.get()).ok());
        a.Reset();
        auto eof = ReceiveZygoteControl(b.get());
        CPPUNIT_ASSERT(eof.ok() && !eof->has_value());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SandboxControlTests);
