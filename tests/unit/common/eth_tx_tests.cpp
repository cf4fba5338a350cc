#include <cppunit/extensions/HelperMacros.h>

#include <map>
#include <sstream>

#include "common/eth_tx.h"
#include "common/hex.h"
#include "common/rlp.h"
#include "tests/test_support.h"

using namespace sigil::common;

namespace {

using Fields = std::map<std::string, std::string>;

// Blocks of "key: value" lines separated by blank lines; '#' lines are comments.
std::vector<Fields> ReadBlocks(const std::string& name) {
    std::istringstream in(sigil::test::ReadDataFile(name));
    std::vector<Fields> blocks;
    Fields current;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '#') continue;
        if (line.empty()) {
            if (!current.empty()) blocks.push_back(std::move(current));
            current.clear();
            continue;
        }
        const auto colon = line.find(": ");
        current[line.substr(0, colon)] = line.substr(colon + 2);
    }
    if (!current.empty()) blocks.push_back(std::move(current));
    return blocks;
}

template <std::size_t N>
std::array<std::uint8_t, N> Fixed(const std::string& hex) {
    const Bytes b = HexDecodeExact(hex, N).value();
    std::array<std::uint8_t, N> out{};
    std::copy(b.begin(), b.end(), out.begin());
    return out;
}

Eip1559Tx TxFrom(const Fields& f) {
    Eip1559Tx tx;
    tx.chain_id = std::stoull(f.at("chain_id"));
    tx.nonce = std::stoull(f.at("nonce"));
    tx.max_priority_fee_per_gas = *Uint256::FromDecimal(f.at("max_priority_fee_per_gas"));
    tx.max_fee_per_gas = *Uint256::FromDecimal(f.at("max_fee_per_gas"));
    tx.gas_limit = std::stoull(f.at("gas_limit"));
    if (f.at("to") != "-") tx.to = Fixed<20>(f.at("to"));
    tx.value = *Uint256::FromDecimal(f.at("value"));
    tx.data = *HexDecode(f.at("data"));
    std::istringstream entries(f.at("access_list") == "-" ? "" : f.at("access_list"));
    std::string entry;
    while (std::getline(entries, entry, ';')) {
        AccessListEntry e;
        e.address = Fixed<20>(entry.substr(0, entry.find(':')));
        std::istringstream keys(entry.substr(entry.find(':') + 1));
        std::string key;
        while (std::getline(keys, key, ',')) e.storage_keys.push_back(Fixed<32>(key));
        tx.access_list.push_back(std::move(e));
    }
    return tx;
}

Eip1559Tx SampleTx() {
    Eip1559Tx tx;
    tx.chain_id = 1;
    tx.gas_limit = 21000;
    tx.to = Address20{};
    return tx;
}

std::string DecodeCode(const Bytes& payload) {
    auto r = DecodeSigningPayload(payload);
    return r.ok() ? "ok" : r.error().code;
}

}  // namespace

class EthTxTests : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(EthTxTests);
    CPPUNIT_TEST(testEthersVectors);
    CPPUNIT_TEST(testEip155SpecExample);
    CPPUNIT_TEST(testLegacyEncodings);
    CPPUNIT_TEST(testRejectsBadSignatureParts);
    CPPUNIT_TEST(testDecodeRoundTrip);
    CPPUNIT_TEST(testDecodeRejectsMalformedPayloads);
    CPPUNIT_TEST_SUITE_END();

public:
    void testEthersVectors() {
        const auto blocks = ReadBlocks("eth_tx_eip1559.txt");
        CPPUNIT_ASSERT_EQUAL(std::size_t{5}, blocks.size());
        for (const auto& f : blocks) {
            const std::string& name = f.at("name");
            const Eip1559Tx tx = TxFrom(f);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(name, f.at("unsigned_serialized"), HexEncode(SigningPayload(tx), true));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(name, f.at("unsigned_hash"), HexEncode(SigningHash(tx), true));
            auto raw = EncodeSigned(tx, static_cast<std::uint8_t>(std::stoi(f.at("y_parity"))), Fixed<32>(f.at("r")),
                                    Fixed<32>(f.at("s")));
            CPPUNIT_ASSERT_MESSAGE(name, raw.ok());
            CPPUNIT_ASSERT_EQUAL_MESSAGE(name, f.at("serialized"), HexEncode(*raw, true));
            CPPUNIT_ASSERT_EQUAL_MESSAGE(name, f.at("hash"), HexEncode(TxHash(*raw), true));
        }
    }
    void testEip155SpecExample() {
        // EIP-155 "Example": nonce 9, gasprice 20 gwei, startgas 21000, to 0x3535..35, value 1 ether, chain id 1.
        LegacyTx tx;
        tx.nonce = 9;
        tx.gas_price = Uint256::FromUint64(20000000000ull);
        tx.gas_limit = 21000;
        tx.to = Fixed<20>("0x3535353535353535353535353535353535353535");
        tx.value = Uint256::FromUint64(1000000000000000000ull);
        CPPUNIT_ASSERT_EQUAL(std::string("0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53"),
                             HexEncode(LegacyEip155SigningHash(tx, 1), true));
    }
    void testLegacyEncodings() {
        LegacyTx tx;
        tx.nonce = 9;
        tx.gas_price = Uint256::FromUint64(20000000000ull);
        tx.gas_limit = 21000;
        tx.to = Fixed<20>("0x3535353535353535353535353535353535353535");
        tx.value = Uint256::FromUint64(1000000000000000000ull);
        CPPUNIT_ASSERT(LegacySigningHash(tx, 1) == LegacyEip155SigningHash(tx, 1));
        // EIP-155 "Example": the signed transaction for r, s and v = 37 (chain id 1, y parity 0).
        const Hash32 r = Fixed<32>("0x28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276");
        const Hash32 s = Fixed<32>("0x67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83");
        auto raw = EncodeSignedLegacy(tx, 1, 0, r, s);
        CPPUNIT_ASSERT(raw.ok());
        CPPUNIT_ASSERT_EQUAL(std::string("0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000"
                                         "8025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8"
                                         "997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"),
                             HexEncode(*raw, true));
        // Homestead (no chain id): v = 27 + y, and the six-field hash.
        auto homestead = EncodeSignedLegacy(tx, 0, 1, r, s);
        CPPUNIT_ASSERT(homestead.ok());
        CPPUNIT_ASSERT_EQUAL(std::uint8_t{0x1c}, (*homestead)[homestead->size() - 67]);
        CPPUNIT_ASSERT(LegacySigningHash(tx, 0) != LegacySigningHash(tx, 1));
        CPPUNIT_ASSERT(!EncodeSignedLegacy(tx, 1, 2, r, s).ok());
        // EIP-2930 with an empty access list: a typed payload ending in an empty list (0xc0).
        const Bytes payload = Eip2930SigningPayload(tx, 1);
        CPPUNIT_ASSERT_EQUAL(std::uint8_t{0x01}, payload.front());
        CPPUNIT_ASSERT_EQUAL(std::uint8_t{0xc0}, payload.back());
        auto typed = EncodeSignedEip2930(tx, 1, 1, r, s);
        CPPUNIT_ASSERT(typed.ok() && typed->front() == 0x01);
        CPPUNIT_ASSERT(!EncodeSignedEip2930(tx, 1, 0, Hash32{}, s).ok());
    }
    void testRejectsBadSignatureParts() {
        const Hash32 one = Fixed<32>("0x" + std::string(63, '0') + "1");
        CPPUNIT_ASSERT(EncodeSigned(SampleTx(), 1, one, one).ok());
        CPPUNIT_ASSERT_EQUAL(std::string("tx_bad_signature"), EncodeSigned(SampleTx(), 2, one, one).error().code);
        CPPUNIT_ASSERT_EQUAL(std::string("tx_bad_signature"), EncodeSigned(SampleTx(), 27, one, one).error().code);
        CPPUNIT_ASSERT(!EncodeSigned(SampleTx(), 0, Hash32{}, one).ok());
        CPPUNIT_ASSERT(!EncodeSigned(SampleTx(), 0, one, Hash32{}).ok());
    }
    void testDecodeRoundTrip() {
        for (const auto& f : ReadBlocks("eth_tx_eip1559.txt")) {
            const Eip1559Tx tx = TxFrom(f);
            auto decoded = DecodeSigningPayload(*HexDecode(f.at("unsigned_serialized")));
            CPPUNIT_ASSERT_MESSAGE(f.at("name"), decoded.ok());
            CPPUNIT_ASSERT_MESSAGE(f.at("name"), *decoded == tx);
        }
    }
    void testDecodeRejectsMalformedPayloads() {
        const Bytes good = SigningPayload(SampleTx());
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode(good));
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode({}));
        Bytes wrong_type = good;
        wrong_type[0] = 0x01;
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(wrong_type));
        Bytes trailing = good;
        trailing.push_back(0x80);
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(trailing));
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(Bytes(good.begin(), good.end() - 1)));

        auto with_fields = [](std::vector<RlpItem> fields) {
            Bytes out{0x02};
            const Bytes body = RlpEncode(RlpItem::List(std::move(fields)));
            out.insert(out.end(), body.begin(), body.end());
            return out;
        };
        auto fields = [] {
            return std::vector<RlpItem>{RlpItem::Uint(1),  RlpItem::Uint(0), RlpItem::Uint(0),
                                        RlpItem::Uint(0),  RlpItem::Uint(21000), RlpItem::String(Bytes(20, 0)),
                                        RlpItem::Uint(0),  RlpItem::String({}), RlpItem::List({})};
        };
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), DecodeCode(with_fields(fields())));
        auto eight = fields();
        eight.pop_back();
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(eight)));
        auto short_to = fields();
        short_to[5] = RlpItem::String(Bytes(19, 0));
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(short_to)));
        auto padded_int = fields();
        padded_int[1] = RlpItem::String(Bytes{0x00, 0x01});  // nonce with a leading zero
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(padded_int)));
        auto wide_chain = fields();
        wide_chain[0] = RlpItem::String(Bytes(9, 0x01));  // chain id above 64 bits
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(wide_chain)));
        auto bad_access = fields();
        bad_access[8] = RlpItem::List({RlpItem::List({RlpItem::String(Bytes(20, 0)), RlpItem::List({RlpItem::String(Bytes(31, 0))})})});
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(bad_access)));
        auto list_data = fields();
        list_data[7] = RlpItem::List({});
        CPPUNIT_ASSERT_EQUAL(std::string("tx_malformed"), DecodeCode(with_fields(list_data)));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(EthTxTests);
