// SCM_RIGHTS descriptor passing over real socket pairs (datagram and seqpacket).
#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "common/fd_passing.h"

using namespace sigil::common;

namespace {

struct Pair {
    UniqueFd a, b;
    explicit Pair(int type) {
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, ::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, p));
        a = UniqueFd(p[0]);
        b = UniqueFd(p[1]);
    }
};

ByteView Text(const char* s) { return ByteView(reinterpret_cast<const std::uint8_t*>(s), std::char_traits<char>::length(s)); }

// The lowest free descriptor number: unchanged when a receive closed everything it took.
int LowestFree() {
    const int fd = ::dup(0);
    ::close(fd);
    return fd;
}

}  // namespace

class FdPassingTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(FdPassingTests);
    CPPUNIT_TEST(testPayloadAndDescriptorArriveTogether);
    CPPUNIT_TEST(testMessageWithoutDescriptors);
    CPPUNIT_TEST(testSeveralDescriptorsInOrder);
    CPPUNIT_TEST(testRejectsEmptyPayloadAndTooManyDescriptors);
    CPPUNIT_TEST(testTruncatedPayloadIsFlaggedAndDescriptorsOwned);
    CPPUNIT_TEST(testEofAndEmptyQueue);
    CPPUNIT_TEST_SUITE_END();

public:
    void testPayloadAndDescriptorArriveTogether() {
        Pair pair(SOCK_SEQPACKET);
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(p));
        CPPUNIT_ASSERT(SendWithDescriptors(pair.a.get(), Text("spawn"), &p[1], 1));
        ::close(p[1]);  // the copy in flight keeps the pipe's write end open
        std::uint8_t buf[16];
        ReceivedMessage msg;
        CPPUNIT_ASSERT(ReceiveWithDescriptors(pair.b.get(), buf, msg));
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, msg.size);
        CPPUNIT_ASSERT_EQUAL(std::string("spawn"), std::string(reinterpret_cast<char*>(buf), 5));
        CPPUNIT_ASSERT(!msg.truncated && !msg.eof);
        CPPUNIT_ASSERT_EQUAL(std::size_t{1}, msg.fds.size());
        CPPUNIT_ASSERT((::fcntl(msg.fds[0].get(), F_GETFD) & FD_CLOEXEC) != 0);
        CPPUNIT_ASSERT_EQUAL(ssize_t{2}, ::write(msg.fds[0].get(), "ok", 2));
        char got[2];
        CPPUNIT_ASSERT_EQUAL(ssize_t{2}, ::read(p[0], got, 2));
        ::close(p[0]);
    }
    void testMessageWithoutDescriptors() {
        Pair pair(SOCK_SEQPACKET);
        CPPUNIT_ASSERT(SendWithDescriptors(pair.a.get(), Text("kill"), nullptr, 0));
        std::uint8_t buf[16];
        ReceivedMessage msg;
        CPPUNIT_ASSERT(ReceiveWithDescriptors(pair.b.get(), buf, msg));
        CPPUNIT_ASSERT_EQUAL(std::size_t{4}, msg.size);
        CPPUNIT_ASSERT(msg.fds.empty());
    }
    void testSeveralDescriptorsInOrder() {
        Pair pair(SOCK_DGRAM);
        int p[2], q[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(p));
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(q));
        const int fds[2] = {p[1], q[1]};
        CPPUNIT_ASSERT(SendWithDescriptors(pair.a.get(), Text("x"), fds, 2, MSG_DONTWAIT));
        ::close(p[1]);
        ::close(q[1]);
        std::uint8_t buf[1];
        ReceivedMessage msg;
        CPPUNIT_ASSERT(ReceiveWithDescriptors(pair.b.get(), buf, msg, MSG_DONTWAIT));
        CPPUNIT_ASSERT_EQUAL(std::size_t{2}, msg.fds.size());
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, ::write(msg.fds[1].get(), "q", 1));
        char c = 0;
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, ::read(q[0], &c, 1));
        CPPUNIT_ASSERT_EQUAL('q', c);
        ::close(p[0]);
        ::close(q[0]);
    }
    void testRejectsEmptyPayloadAndTooManyDescriptors() {
        Pair pair(SOCK_DGRAM);
        int fd = 0;
        CPPUNIT_ASSERT(!SendWithDescriptors(pair.a.get(), ByteView(), &fd, 1));
        CPPUNIT_ASSERT_EQUAL(EINVAL, errno);
        const int many[FD_PASSING_MAX + 1] = {0, 0, 0, 0, 0};
        CPPUNIT_ASSERT(!SendWithDescriptors(pair.a.get(), Text("x"), many, FD_PASSING_MAX + 1));
        std::uint8_t buf[4];
        ReceivedMessage msg;
        CPPUNIT_ASSERT(!ReceiveWithDescriptors(pair.b.get(), buf, msg, MSG_DONTWAIT));  // nothing was sent
        CPPUNIT_ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
    }
    void testTruncatedPayloadIsFlaggedAndDescriptorsOwned() {
        Pair pair(SOCK_SEQPACKET);
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(p));
        CPPUNIT_ASSERT(SendWithDescriptors(pair.a.get(), Text("longer than the buffer"), p, 2));
        ::close(p[0]);
        ::close(p[1]);
        const int before = LowestFree();
        {
            std::uint8_t buf[4];
            ReceivedMessage msg;
            CPPUNIT_ASSERT(ReceiveWithDescriptors(pair.b.get(), buf, msg));
            CPPUNIT_ASSERT(msg.truncated);
            CPPUNIT_ASSERT_EQUAL(std::size_t{2}, msg.fds.size());
        }
        CPPUNIT_ASSERT_EQUAL(before, LowestFree());  // both closed with the message
    }
    void testEofAndEmptyQueue() {
        Pair pair(SOCK_SEQPACKET);
        std::uint8_t buf[4];
        ReceivedMessage msg;
        CPPUNIT_ASSERT(!ReceiveWithDescriptors(pair.b.get(), buf, msg, MSG_DONTWAIT));
        CPPUNIT_ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
        pair.a.Reset();
        CPPUNIT_ASSERT(ReceiveWithDescriptors(pair.b.get(), buf, msg));
        CPPUNIT_ASSERT(msg.eof);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FdPassingTests);
