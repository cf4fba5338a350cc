#include "keyd/client/keyd_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/activity.h"
#include "common/metrics.h"

namespace sigil::workers {
namespace {

using Clock = std::chrono::steady_clock;
using common::ErrorKind;
using common::MakeError;

common::Error Unavailable(const std::string& message) {
    return MakeError(ErrorKind::Unavailable, "keyd_unavailable", message);
}

int RemainingMs(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline. False on timeout or poll failure.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int ms = RemainingMs(deadline);
        const int rc = ::poll(&p, 1, ms);
        if (rc > 0) return true;
        if (rc == 0 || errno != EINTR) return false;
    }
}

bool IsBrokenConnection(int err) { return err == EPIPE || err == ECONNRESET || err == ENOTCONN; }

}  // namespace

KeydClient::KeydClient(KeydClientOptions options) : m_options(std::move(options)) {}

void KeydClient::Disconnect() { m_fd.Reset(); }

common::Status KeydClient::Connect() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (m_options.socket_path.empty() || m_options.socket_path.size() >= sizeof addr.sun_path) {
        return Unavailable("keyd socket path is empty or too long");
    }
    std::memcpy(addr.sun_path, m_options.socket_path.c_str(), m_options.socket_path.size());
    const auto deadline = Clock::now() + m_options.connect_timeout;
    for (;;) {
        common::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd.valid()) return Unavailable(std::string("socket: ") + std::strerror(errno));
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
            m_fd = std::move(fd);
            return common::Success();
        }
        int err = errno;
        if (err == EINPROGRESS) {
            if (!WaitFor(fd.get(), POLLOUT, deadline)) return Unavailable("connecting to keyd timed out");
            socklen_t len = sizeof err;
            if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
            if (err == 0) {
                m_fd = std::move(fd);
                return common::Success();
            }
        }
        // A full listen backlog (EAGAIN) clears as keyd accepts: retry until the deadline.
        if (err != EAGAIN || RemainingMs(deadline) == 0) {
            // The socket's path stays out of the message: it reaches HTTP callers.
            return Unavailable(std::string("cannot connect to keyd: ") + std::strerror(err));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

common::Result<common::SecretBuffer> KeydClient::Exchange(const common::SecretBuffer& frame, bool* broken) {
    *broken = false;
    const auto deadline = Clock::now() + m_options.request_timeout;
    const std::string timed_out =
        "keyd did not answer within " + std::to_string(m_options.request_timeout.count()) + " ms";
    std::size_t sent = 0;
    while (sent < frame.size()) {
        const ssize_t n = ::send(m_fd.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
        if (n >= 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!WaitFor(m_fd.get(), POLLOUT, deadline)) return Unavailable(timed_out);
            continue;
        }
        *broken = IsBrokenConnection(errno);
        return Unavailable(std::string("sending to keyd: ") + std::strerror(errno));
    }

    common::FrameDecoder decoder;
    std::array<std::uint8_t, 4096> chunk;
    bool received_any = false;
    for (;;) {
        if (const auto payload = decoder.Front()) {
            common::SecretBuffer reply(payload->begin(), payload->end());
            decoder.Pop();
            // One request, one reply: anything more means we lost track of the stream.
            if (decoder.Front() || decoder.Pending() > 0) {
                return MakeError(ErrorKind::Internal, "keyd_protocol_error", "keyd sent more than one reply");
            }
            return reply;
        }
        if (!WaitFor(m_fd.get(), POLLIN, deadline)) return Unavailable(timed_out);
        const ssize_t n = ::recv(m_fd.get(), chunk.data(), std::min(chunk.size(), decoder.Space()), 0);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            *broken = !received_any && IsBrokenConnection(errno);
            return Unavailable(std::string("reading from keyd: ") + std::strerror(errno));
        }
        if (n == 0) {
            *broken = !received_any;
            return Unavailable(received_any ? "keyd closed the connection in the middle of a reply"
                                            : "keyd closed the connection");
        }
        received_any = true;
        const common::Status fed = decoder.Feed(common::ByteView(chunk.data(), static_cast<std::size_t>(n)));
        common::Wipe(chunk.data(), static_cast<std::size_t>(n));
        if (!fed.ok()) {
            return MakeError(ErrorKind::Internal, "keyd_protocol_error", "keyd reply: " + fed.error().message);
        }
    }
}

common::Result<common::SecretBuffer> KeydClient::Call(const common::SecretBuffer& frame) {
    const common::ActivityScope activity(common::Activity::Keyd);
    common::DependencyTimer timer(common::Dependency::Keyd);
    auto reply = CallUncounted(frame);
    if (reply.ok()) timer.MarkOk();
    return reply;
}

common::Result<common::SecretBuffer> KeydClient::CallUncounted(const common::SecretBuffer& frame) {
    const bool reused = m_fd.valid();
    if (!reused) SIGIL_TRY_STATUS(Connect());
    bool broken = false;
    auto reply = Exchange(frame, &broken);
    if (reply.ok()) return reply;
    // After any failure the stream position is unknown: never reuse this connection.
    Disconnect();
    if (!(broken && reused)) return reply;
    // keyd restarted or dropped an idle connection since our last request: once more, afresh.
    SIGIL_TRY_STATUS(Connect());
    reply = Exchange(frame, &broken);
    if (!reply.ok()) Disconnect();
    return reply;
}

common::Status KeydClient::Ping() {
    auto reply = Call(keyd::EncodePingRequest());
    if (!reply.ok()) return reply.error();
    return keyd::DecodePongReply(*reply);
}

common::Result<keyd::KeydStats> KeydClient::Stats() {
    auto reply = Call(keyd::EncodeStatsRequest());
    if (!reply.ok()) return reply.error();
    return keyd::DecodeStatsReply(*reply);
}

common::Result<common::Hash32> KeydClient::MintPath() {
    auto reply = Call(keyd::EncodeMintPathRequest());
    if (!reply.ok()) return reply.error();
    return keyd::DecodePathReply(*reply);
}

common::Result<keyd::PublicKeyInfo> KeydClient::GetPkpPublic(const keyd::PkpRef& ref) {
    auto reply = Call(keyd::EncodePkpRequest(keyd::KeydMessage::GetPkpPublic, ref));
    if (!reply.ok()) return reply.error();
    return keyd::DecodePublicKeyReply(*reply);
}

common::Result<keyd::PkpKeys> KeydClient::GetPkpKeys(const keyd::PkpRef& ref) {
    auto reply = Call(keyd::EncodePkpRequest(keyd::KeydMessage::GetPkpKeys, ref));
    if (!reply.ok()) return reply.error();
    return keyd::DecodePkpKeysReply(*reply);
}

common::Result<common::SecretBytes> KeydClient::GetActionKey(std::string_view cid) {
    auto frame = keyd::EncodeActionRequest(keyd::KeydMessage::GetActionKey, cid);
    if (!frame.ok()) return frame.error();
    auto reply = Call(*frame);
    if (!reply.ok()) return reply.error();
    return keyd::DecodeSecretKeyReply(*reply);
}

common::Result<keyd::PublicKeyInfo> KeydClient::GetActionPublic(std::string_view cid) {
    auto frame = keyd::EncodeActionRequest(keyd::KeydMessage::GetActionPublic, cid);
    if (!frame.ok()) return frame.error();
    auto reply = Call(*frame);
    if (!reply.ok()) return reply.error();
    return keyd::DecodePublicKeyReply(*reply);
}

common::Result<keyd::PayerList> KeydClient::GetPayers(std::uint32_t count) {
    auto reply = Call(keyd::EncodeGetPayersRequest(count));
    if (!reply.ok()) return reply.error();
    return keyd::DecodePayersReply(*reply);
}

common::Result<common::Bytes> KeydClient::SignPayerTx(const keyd::PayerTxRequest& tx) {
    auto frame = keyd::EncodeSignPayerTxRequest(tx);
    if (!frame.ok()) return frame.error();
    auto reply = Call(*frame);
    if (!reply.ok()) return reply.error();
    return keyd::DecodeSignedTxReply(*reply);
}

common::Result<keyd::ReceiptSignature> KeydClient::SignReceipt(const keyd::ReceiptSignRequest& request) {
    auto frame = keyd::EncodeSignReceiptRequest(request);
    if (!frame.ok()) return frame.error();
    auto reply = Call(*frame);
    if (!reply.ok()) return reply.error();
    return keyd::DecodeReceiptSignatureReply(*reply);
}

common::Result<keyd::PublicKeyInfo> KeydClient::GetReceiptPublic() {
    auto reply = Call(keyd::EncodeGetReceiptPublicRequest());
    if (!reply.ok()) return reply.error();
    return keyd::DecodePublicKeyReply(*reply);
}

}  // namespace sigil::workers
