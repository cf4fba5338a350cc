// keyd's message codec (keyd/protocol.h): wire bytes, round trips, refusals of wrong shapes.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>

#include "common/hex.h"
#include "common/ipc_frame.h"
#include "keyd/protocol.h"

using namespace sigil::common;
using namespace sigil::keyd;

namespace {

ByteView PayloadOf(const SecretBuffer& frame) { return ByteView(frame).subspan(IPC_HEADER_SIZE); }

Hash32 Filled(std::uint8_t b) {
    Hash32 h;
    h.fill(b);
    return h;
}

}  // namespace

class ProtocolTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ProtocolTests);
    CPPUNIT_TEST(testWireBytesOfPkpRequest);
    CPPUNIT_TEST(testRequestDecodersRefuseWrongShapes);
    CPPUNIT_TEST(testRoundTripsRequests);
    CPPUNIT_TEST(testRoundTripsReplies);
    CPPUNIT_TEST(testFailureReplyBecomesError);
    CPPUNIT_TEST(testUnexpectedReplyIsProtocolError);
    CPPUNIT_TEST(testActionRequestValidatesCid);
    CPPUNIT_TEST(testWriterRefusesOversizedMessage);
    CPPUNIT_TEST(testStatsRoundTripAndKinds);
    CPPUNIT_TEST_SUITE_END();

public:
    void testWireBytesOfPkpRequest() {
        // The layout documented in keyd/protocol.md, byte for byte.
        const SecretBuffer frame = EncodePkpRequest(KeydMessage::GetPkpKeys, PkpRef{Filled(0x11), Filled(0x22)});
        const std::string expected = "00000049" "04" "00000020" + std::string(64, '1') + "00000020" + std::string(64, '2');
        CPPUNIT_ASSERT_EQUAL(expected, HexEncode(ByteView(frame)));
        const SecretBuffer ping = EncodePingRequest();
        CPPUNIT_ASSERT_EQUAL(std::string("0000000101"), HexEncode(ByteView(ping)));
        const SecretBuffer payers = EncodeGetPayersRequest(3);
        CPPUNIT_ASSERT_EQUAL(std::string("0000000d07000000080000000000000003"), HexEncode(ByteView(payers)));
    }
    void testRequestDecodersRefuseWrongShapes() {
        // Ping with a field, PKP request with a 31-byte path, payers with an extra field.
        MessageWriter ping(static_cast<std::uint8_t>(KeydMessage::Ping));
        ping.PutU64(1);
        CPPUNIT_ASSERT(!DecodeEmptyRequest(PayloadOf(*std::move(ping).Finish())).ok());
        MessageWriter pkp(static_cast<std::uint8_t>(KeydMessage::GetPkpKeys));
        pkp.PutBytes(Filled(1));
        pkp.PutBytes(ByteView(Filled(2)).first(31));
        CPPUNIT_ASSERT_EQUAL(std::string("malformed_message"),
                             DecodePkpRequest(PayloadOf(*std::move(pkp).Finish())).error().code);
        // Account hash missing entirely: keyd never accepts a path alone.
        MessageWriter path_only(static_cast<std::uint8_t>(KeydMessage::GetPkpKeys));
        path_only.PutBytes(Filled(2));
        CPPUNIT_ASSERT(!DecodePkpRequest(PayloadOf(*std::move(path_only).Finish())).ok());
        MessageWriter payers(static_cast<std::uint8_t>(KeydMessage::GetPayers));
        payers.PutU64(1);
        payers.PutU64(2);
        CPPUNIT_ASSERT(!DecodeGetPayersRequest(PayloadOf(*std::move(payers).Finish())).ok());
        // Right fields, wrong type byte.
        const SecretBuffer keys = EncodePkpRequest(KeydMessage::GetPkpKeys, PkpRef{Filled(1), Filled(2)});
        CPPUNIT_ASSERT(!DecodeGetPayersRequest(PayloadOf(keys)).ok());
        CPPUNIT_ASSERT(!DecodeSignPayerTxRequest(PayloadOf(keys)).ok());
        // A recipient of neither 0 nor 20 bytes.
        MessageWriter tx(static_cast<std::uint8_t>(KeydMessage::SignPayerTx));
        for (int i = 0; i < 6; ++i) tx.PutU64(1);
        tx.PutBytes(Bytes(19, 1));
        tx.PutBytes({});
        CPPUNIT_ASSERT(!DecodeSignPayerTxRequest(PayloadOf(*std::move(tx).Finish())).ok());
    }
    void testRoundTripsRequests() {
        const SecretBuffer mint = EncodeMintPathRequest();
        CPPUNIT_ASSERT(DecodeEmptyRequest(PayloadOf(mint)).ok());
        const SecretBuffer pub = EncodePkpRequest(KeydMessage::GetPkpPublic, PkpRef{Filled(3), Filled(4)});
        auto ref = DecodePkpRequest(PayloadOf(pub));
        CPPUNIT_ASSERT(ref.ok() && ref->account_hash == Filled(3) && ref->path == Filled(4));
        auto action = EncodeActionRequest(KeydMessage::GetActionPublic, "QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL");
        CPPUNIT_ASSERT_EQUAL(std::string("QmQCfF8RKXxtP41o9JBK79SkvLAiq8MadNk7KC2hQ1MRpL"),
                             *DecodeActionRequest(PayloadOf(*action)));
        CPPUNIT_ASSERT_EQUAL(std::uint64_t{42}, *DecodeGetPayersRequest(PayloadOf(EncodeGetPayersRequest(42))));

        PayerTxRequest tx;
        tx.payer = IPC_ADMIN_PAYER;
        tx.chain_id = 31337;
        tx.nonce = 7;
        tx.max_priority_fee_per_gas = 1000000000;
        tx.max_fee_per_gas = 2000000000;
        tx.gas_limit = 300000;
        tx.to = Address20{};
        tx.to->fill(0xab);
        tx.data = Bytes{0xde, 0xad, 0xbe, 0xef};
        auto decoded = DecodeSignPayerTxRequest(PayloadOf(*EncodeSignPayerTxRequest(tx)));
        CPPUNIT_ASSERT(decoded.ok());
        CPPUNIT_ASSERT(decoded->payer == tx.payer && decoded->chain_id == tx.chain_id && decoded->nonce == 7);
        CPPUNIT_ASSERT(decoded->max_priority_fee_per_gas == tx.max_priority_fee_per_gas);
        CPPUNIT_ASSERT(decoded->max_fee_per_gas == tx.max_fee_per_gas && decoded->gas_limit == tx.gas_limit);
        CPPUNIT_ASSERT(decoded->to == tx.to && decoded->data == tx.data);
        tx.to.reset();
        CPPUNIT_ASSERT(!DecodeSignPayerTxRequest(PayloadOf(*EncodeSignPayerTxRequest(tx)))->to.has_value());
        // The caller's key and the conversion consent travel with the write.
        tx.api_key = SecretBytes(AsBytes("the caller's key"));
        tx.consent = PayerTxRequest::Consent{1'700'000'000, {}};
        tx.consent->signature.fill(0x1b);
        auto with = DecodeSignPayerTxRequest(PayloadOf(*EncodeSignPayerTxRequest(tx)));
        CPPUNIT_ASSERT(with.ok() && with->api_key.text() == "the caller's key" && with->consent &&
                       with->consent->issued_at == 1'700'000'000 && with->consent->signature == tx.consent->signature);
        // A key over the cap, or an issuedAt without its signature, is malformed.
        MessageWriter odd(static_cast<std::uint8_t>(KeydMessage::SignPayerTx));
        for (int i = 0; i < 6; ++i) odd.PutU64(1);
        odd.PutBytes({});
        odd.PutBytes({});
        odd.PutBytes({});
        odd.PutU64(5);
        odd.PutBytes({});
        CPPUNIT_ASSERT(!DecodeSignPayerTxRequest(PayloadOf(*std::move(odd).Finish())).ok());
        tx.api_key = SecretBytes(Bytes(IPC_MAX_API_KEY + 1, 'k'));
        CPPUNIT_ASSERT(!DecodeSignPayerTxRequest(PayloadOf(*EncodeSignPayerTxRequest(tx))).ok());
    }
    void testRoundTripsReplies() {
        CPPUNIT_ASSERT(DecodePongReply(PayloadOf(EncodePongReply())).ok());
        CPPUNIT_ASSERT(*DecodePathReply(PayloadOf(EncodePathReply(Filled(9)))) == Filled(9));
        PublicKeyInfo info;
        info.address.fill(0x12);
        info.public_key.fill(0x34);
        info.public_key[0] = 0x04;
        auto got = DecodePublicKeyReply(PayloadOf(EncodePublicKeyReply(info)));
        CPPUNIT_ASSERT(got.ok() && got->address == info.address && got->public_key == info.public_key);
        const SecretBytes a(ByteView(Filled(5))), b(ByteView(Filled(6)));
        auto keys = DecodePkpKeysReply(PayloadOf(EncodePkpKeysReply(a, b)));
        CPPUNIT_ASSERT(keys.ok());
        CPPUNIT_ASSERT(ConstantTimeEqual(keys->signing_key.view(), a.view()));
        CPPUNIT_ASSERT(ConstantTimeEqual(keys->encryption_key.view(), b.view()));
        auto secret = DecodeSecretKeyReply(PayloadOf(EncodeSecretKeyReply(a)));
        CPPUNIT_ASSERT(secret.ok() && ConstantTimeEqual(secret->view(), a.view()));
        PayerList payers;
        payers.admin.fill(1);
        payers.payers.resize(3);
        payers.payers[2].fill(7);
        auto list = DecodePayersReply(PayloadOf(EncodePayersReply(payers)));
        CPPUNIT_ASSERT(list.ok() && list->admin == payers.admin && list->payers == payers.payers);
        const Bytes raw{0x02, 0xf8, 0x01};
        CPPUNIT_ASSERT(*DecodeSignedTxReply(PayloadOf(*EncodeSignedTxReply(raw))) == raw);
    }
    void testFailureReplyBecomesError() {
        const SecretBuffer refused = EncodeFailureReply(KeydFailure::Refused, "wrong chain");
        auto f = DecodeFailureReply(PayloadOf(refused));
        CPPUNIT_ASSERT(f.ok() && f->code == KeydFailure::Refused && f->message == "wrong chain");
        auto e = DecodeSignedTxReply(PayloadOf(refused));
        CPPUNIT_ASSERT(!e.ok());
        CPPUNIT_ASSERT(e.error().kind == ErrorKind::Forbidden);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_refused"), e.error().code);
        const SecretBuffer unknown = EncodeFailureReply(KeydFailure::UnknownRequest, "type 99");
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unknown_request"), DecodePathReply(PayloadOf(unknown)).error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_out_of_range"),
                             DecodePayersReply(PayloadOf(EncodeFailureReply(KeydFailure::OutOfRange, ""))).error().code);
        // Over-long messages are cut, never refused.
        const SecretBuffer longer = EncodeFailureReply(KeydFailure::Internal, std::string(1000, 'x'));
        CPPUNIT_ASSERT_EQUAL(IPC_MAX_FAILURE_MESSAGE, DecodeFailureReply(PayloadOf(longer))->message.size());
    }
    void testUnexpectedReplyIsProtocolError() {
        auto e = DecodePkpKeysReply(PayloadOf(EncodePongReply()));
        CPPUNIT_ASSERT(!e.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_protocol_error"), e.error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_protocol_error"), DecodePongReply({}).error().code);
        // A public key not in uncompressed form.
        PublicKeyInfo info;
        info.public_key[0] = 0x02;
        CPPUNIT_ASSERT(!DecodePublicKeyReply(PayloadOf(EncodePublicKeyReply(info))).ok());
        // A pong of another protocol version.
        MessageWriter pong(static_cast<std::uint8_t>(KeydMessage::Pong));
        pong.PutU64(IPC_PROTOCOL_VERSION + 1);
        CPPUNIT_ASSERT(!DecodePongReply(PayloadOf(*std::move(pong).Finish())).ok());
    }
    void testActionRequestValidatesCid() {
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_cid"), EncodeActionRequest(KeydMessage::GetActionKey, "").error().code);
        CPPUNIT_ASSERT(!EncodeActionRequest(KeydMessage::GetActionKey, std::string(129, 'a')).ok());
        CPPUNIT_ASSERT(EncodeActionRequest(KeydMessage::GetActionKey, std::string(128, 'a')).ok());
        CPPUNIT_ASSERT(!EncodeActionRequest(KeydMessage::GetActionKey, "Qm/../x").ok());
        // keyd re-checks what the client should have checked.
        MessageWriter w(static_cast<std::uint8_t>(KeydMessage::GetActionKey));
        w.PutBytes(AsBytes("bad cid\n"));
        CPPUNIT_ASSERT_EQUAL(std::string("invalid_cid"), DecodeActionRequest(PayloadOf(*std::move(w).Finish())).error().code);
    }
    void testStatsRoundTripAndKinds() {
        // The request: a type byte, no fields.
        const SecretBuffer request = EncodeStatsRequest();
        CPPUNIT_ASSERT_EQUAL(std::string("0000000120"), HexEncode(ByteView(request), false));
        CPPUNIT_ASSERT(DecodeEmptyRequest(PayloadOf(request)).ok());
        KeydStats s;
        s.uptime_ms = 123456;
        s.key_source = KeySourceKind::Tee;
        for (std::size_t i = 0; i < STATS_KINDS; ++i) {
            s.requests[i] = 1000 + i;
            s.failures[i] = i;
        }
        for (std::size_t i = 0; i < STATS_LATENCY_BUCKETS; ++i) s.latency_buckets[i] = (std::uint64_t{1} << 40) + i;
        s.latency_sum_us = 987654321;
        s.latency_count = 42;
        s.connections_open = 3;
        s.connections_refused = 2;
        auto back = DecodeStatsReply(PayloadOf(EncodeStatsReply(s)));
        CPPUNIT_ASSERT(back.ok());
        CPPUNIT_ASSERT(back->uptime_ms == s.uptime_ms && back->key_source == KeySourceKind::Tee);
        CPPUNIT_ASSERT(back->requests == s.requests && back->failures == s.failures);
        CPPUNIT_ASSERT(back->latency_buckets == s.latency_buckets);
        CPPUNIT_ASSERT(back->latency_sum_us == s.latency_sum_us && back->latency_count == 42);
        CPPUNIT_ASSERT(back->connections_open == 3 && back->connections_refused == 2);
        // A failure reply is keyd's error; another reply, a short table or a bad source: protocol errors.
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_unknown_request"),
                             DecodeStatsReply(PayloadOf(EncodeFailureReply(KeydFailure::UnknownRequest, "x"))).error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_protocol_error"), DecodeStatsReply(PayloadOf(EncodePongReply())).error().code);
        MessageWriter shortTable(static_cast<std::uint8_t>(KeydMessage::StatsReply));
        shortTable.PutU64(1);
        shortTable.PutU64(1);
        shortTable.PutBytes(Bytes(8 * (STATS_KINDS - 1), 0));
        CPPUNIT_ASSERT_EQUAL(std::string("keyd_protocol_error"), DecodeStatsReply(PayloadOf(*std::move(shortTable).Finish())).error().code);
        KeydStats bad = s;
        bad.key_source = static_cast<KeySourceKind>(7);
        CPPUNIT_ASSERT(!DecodeStatsReply(PayloadOf(EncodeStatsReply(bad))).ok());
        // Kinds: the request types in order, STATS, then everything else as "unknown".
        CPPUNIT_ASSERT_EQUAL(std::string("ping"), std::string(StatsKindName(StatsKindOf(0x01))));
        CPPUNIT_ASSERT_EQUAL(std::string("sign_payer_tx"), std::string(StatsKindName(StatsKindOf(0x08))));
        CPPUNIT_ASSERT_EQUAL(std::string("stats"), std::string(StatsKindName(StatsKindOf(0x20))));
        for (std::uint8_t t : {0x00, 0x09, 0x1f, 0x21, 0x80, 0xff}) {
            CPPUNIT_ASSERT_EQUAL(std::string("unknown"), std::string(StatsKindName(StatsKindOf(t))));
        }
    }
    void testWriterRefusesOversizedMessage() {
        PayerTxRequest tx;
        tx.to = Address20{};
        tx.data.assign(IPC_MAX_PAYLOAD, 0);
        CPPUNIT_ASSERT_EQUAL(std::string("frame_too_large"), EncodeSignPayerTxRequest(tx).error().code);
        // The largest data that fits: 1 type byte + 7 integer fields + four field headers + 20
        // (an empty key and no consent).
        tx.data.assign(IPC_MAX_PAYLOAD - 1 - 7 * 12 - 4 - 20 - 4 - 4 - 4, 0);
        auto frame = EncodeSignPayerTxRequest(tx);
        CPPUNIT_ASSERT(frame.ok());
        CPPUNIT_ASSERT_EQUAL(IPC_HEADER_SIZE + IPC_MAX_PAYLOAD, frame->size());
        FrameDecoder d;
        CPPUNIT_ASSERT(d.Feed(ByteView(*frame)).ok());
        CPPUNIT_ASSERT(DecodeSignPayerTxRequest(*d.Front()).ok());
        tx.data.push_back(0);
        CPPUNIT_ASSERT(!EncodeSignPayerTxRequest(tx).ok());
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ProtocolTests);
