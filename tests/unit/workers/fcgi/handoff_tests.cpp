#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "common/fd_passing.h"
#include "common/handles.h"
#include "workers/fcgi/handoff.h"

using namespace sigil;
using namespace sigil::workers;

namespace {

struct Pair {
    common::UniqueFd send, recv;
    Pair() {
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, p));
        send = common::UniqueFd(p[0]);
        recv = common::UniqueFd(p[1]);
    }
};

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

}  // namespace

class FcgiHandoffTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(FcgiHandoffTests);
    CPPUNIT_TEST(testConnectionArrivesAsTheSameSocket);
    CPPUNIT_TEST(testEmptyQueueGivesMinusOne);
    CPPUNIT_TEST(testQueuedInOrder);
    CPPUNIT_TEST(testDatagramWithTwoDescriptorsIsDropped);
    CPPUNIT_TEST(testDatagramWithoutDescriptorIsIgnored);
    CPPUNIT_TEST(testSendToClosedPairFails);
    CPPUNIT_TEST_SUITE_END();

public:
    void testConnectionArrivesAsTheSameSocket() {
        Pair pair;
        int conn[2];
        CPPUNIT_ASSERT_EQUAL(0, socketpair(AF_UNIX, SOCK_STREAM, 0, conn));
        common::UniqueFd far(conn[1]);
        CPPUNIT_ASSERT(SendConnection(pair.send.get(), conn[0]));
        ::close(conn[0]);  // the sender's copy goes; the connection lives on in flight
        // Bytes written by the peer meanwhile wait in the connection, not lost.
        CPPUNIT_ASSERT_EQUAL(ssize_t{5}, write(far.get(), "hello", 5));
        common::UniqueFd got(ReceiveConnection(pair.recv.get()));
        CPPUNIT_ASSERT(got.valid());
        CPPUNIT_ASSERT((fcntl(got.get(), F_GETFD) & FD_CLOEXEC) != 0);
        char buf[8] = {};
        CPPUNIT_ASSERT_EQUAL(ssize_t{5}, read(got.get(), buf, sizeof buf));
        CPPUNIT_ASSERT_EQUAL(std::string("hello"), std::string(buf, 5));
        CPPUNIT_ASSERT_EQUAL(ssize_t{2}, write(got.get(), "ok", 2));
        CPPUNIT_ASSERT_EQUAL(ssize_t{2}, read(far.get(), buf, sizeof buf));
    }
    void testEmptyQueueGivesMinusOne() {
        Pair pair;
        CPPUNIT_ASSERT_EQUAL(-1, ReceiveConnection(pair.recv.get()));  // never blocks
    }
    void testQueuedInOrder() {
        Pair pair;
        int a[2], b[2];
        CPPUNIT_ASSERT_EQUAL(0, pipe(a));
        CPPUNIT_ASSERT_EQUAL(0, pipe(b));
        CPPUNIT_ASSERT(SendConnection(pair.send.get(), a[1]));
        CPPUNIT_ASSERT(SendConnection(pair.send.get(), b[1]));
        ::close(a[1]);
        ::close(b[1]);
        common::UniqueFd first(ReceiveConnection(pair.recv.get())), second(ReceiveConnection(pair.recv.get()));
        CPPUNIT_ASSERT(first.valid() && second.valid());
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, write(first.get(), "a", 1));
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, write(second.get(), "b", 1));
        char c = 0;
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, read(a[0], &c, 1));
        CPPUNIT_ASSERT_EQUAL('a', c);
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, read(b[0], &c, 1));
        CPPUNIT_ASSERT_EQUAL('b', c);
        ::close(a[0]);
        ::close(b[0]);
        CPPUNIT_ASSERT_EQUAL(-1, ReceiveConnection(pair.recv.get()));
    }
    void testDatagramWithTwoDescriptorsIsDropped() {
        Pair pair;
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, pipe(p));
        const std::uint8_t byte = 'c';
        CPPUNIT_ASSERT(common::SendWithDescriptors(pair.send.get(), common::ByteView(&byte, 1), p, 2, MSG_DONTWAIT));
        ::close(p[0]);
        ::close(p[1]);
        const int fd_before = dup(0);
        ::close(fd_before);
        CPPUNIT_ASSERT_EQUAL(-1, ReceiveConnection(pair.recv.get()));
        // Both received descriptors were closed: the lowest free number is unchanged.
        const int fd_after = dup(0);
        CPPUNIT_ASSERT_EQUAL(fd_before, fd_after);
        ::close(fd_after);
    }
    void testDatagramWithoutDescriptorIsIgnored() {
        Pair pair;
        CPPUNIT_ASSERT_EQUAL(ssize_t{1}, send(pair.send.get(), "x", 1, 0));
        CPPUNIT_ASSERT_EQUAL(-1, ReceiveConnection(pair.recv.get()));
        CPPUNIT_ASSERT_EQUAL(-1, ReceiveConnection(pair.recv.get()));
    }
    void testSendToClosedPairFails() {
        Pair pair;
        pair.recv.Reset();
        int p[2];
        CPPUNIT_ASSERT_EQUAL(0, pipe(p));
        CPPUNIT_ASSERT(!SendConnection(pair.send.get(), p[1]));  // the caller keeps it
        CPPUNIT_ASSERT(IsOpen(p[1]));
        ::close(p[0]);
        ::close(p[1]);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FcgiHandoffTests);
