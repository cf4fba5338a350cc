#include "workers/chain/account_config.h"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <limits>
#include <optional>
#include <unordered_map>

#include "common/keccak.h"
#include "common/utf8.h"

namespace sigil::workers {
namespace {

using common::AbiValue;
using common::Address20;
using common::Error;
using common::ErrorKind;
using common::Hash32;
using common::MakeError;
using common::Uint256;

constexpr std::string_view USAGE_KEY_TUPLE =
    "(uint256,uint256,uint256,string,string,bool,bool,bool,uint256[],uint256[],uint256[],uint256[])";
constexpr std::string_view GROUP_TUPLE = "(uint256,string,string,address[],bytes32[])";
constexpr std::string_view WALLET_TUPLE = "(address,uint256,string,string)";
constexpr std::string_view ACTION_TUPLE = "(bytes32,string,string)";

struct ContractError {
    const char* signature;
    ErrorKind kind;
    const char* message;
};

// The contract's custom errors grouped by HTTP meaning (see the header comment of AccountConfig.sol).
const ContractError kContractErrors[] = {
    {"NotAuthorized()", ErrorKind::Forbidden, "the key may not change this account"},
    {"OwnerOnly()", ErrorKind::Forbidden, "only the account owner may do this"},
    {"MissingScope(uint8,uint256)", ErrorKind::Forbidden, "the key lacks the scope for this operation"},
    {"NotManaged()", ErrorKind::Forbidden, "the account is ChainSecured: admin writes must come from its wallet"},
    {"KeyExpired()", ErrorKind::Unauthenticated, "the API key has expired"},
    {"NotContractOwner()", ErrorKind::Forbidden, "only the contract owner may do this"},
    {"NotApiPayer()", ErrorKind::Forbidden, "the sender is not an API payer"},
    {"UnknownAccount()", ErrorKind::NotFound, "no such account"},
    {"UnknownGroup(uint256)", ErrorKind::NotFound, "no such group in this account"},
    {"UnknownKey()", ErrorKind::NotFound, "no such usage API key in this account"},
    {"UnknownAction()", ErrorKind::NotFound, "no such action in this account"},
    {"UnknownPkp(address)", ErrorKind::NotFound, "no such PKP in this account"},
    {"NotInGroup()", ErrorKind::NotFound, "the item is not in the group"},
    {"KeyHashTaken()", ErrorKind::Conflict, "the key is already in use"},
    {"AdminTaken()", ErrorKind::Conflict, "the wallet already administers an account"},
    {"PathTaken()", ErrorKind::Conflict, "the derivation path is already registered"},
    {"WalletTaken()", ErrorKind::Conflict, "the wallet is already registered"},
    {"AlreadyUnmanaged()", ErrorKind::Conflict, "the account is already ChainSecured"},
    {"AlreadyInGroup()", ErrorKind::Conflict, "the item is already in the group"},
    {"ActionExists()", ErrorKind::Conflict, "the action is already registered"},
    {"PayerExists()", ErrorKind::Conflict, "the payer is already registered"},
    {"NothingToChange()", ErrorKind::Conflict, "the write would change nothing"},
    {"ZeroKeyHash()", ErrorKind::InvalidInput, "the key hash must not be zero"},
    {"ZeroPath()", ErrorKind::InvalidInput, "the derivation path must not be zero"},
    {"ZeroAddress()", ErrorKind::InvalidInput, "the address must not be zero"},
    {"ZeroCid()", ErrorKind::InvalidInput, "the CID hash must not be zero"},
    {"NameTooLong()", ErrorKind::InvalidInput, "the name is too long (at most 256 bytes)"},
    {"DescriptionTooLong()", ErrorKind::InvalidInput, "the description is too long (at most 4096 bytes)"},
    {"TooMany()", ErrorKind::InvalidInput, "too many items"},
    {"Duplicate()", ErrorKind::InvalidInput, "the list contains a duplicate"},
    {"InvalidAdmin()", ErrorKind::InvalidInput, "the wallet cannot administer an account"},
};

// "MissingScope(uint8,uint256)" -> "missing_scope"
std::string SnakeName(std::string_view signature) {
    std::string out;
    for (char c : signature.substr(0, signature.find('('))) {
        if (c >= 'A' && c <= 'Z') {
            if (!out.empty()) out += '_';
            out += static_cast<char>(c - 'A' + 'a');
        } else {
            out += c;
        }
    }
    return out;
}

const std::vector<common::AbiSignature>& ParsedErrors() {
    static const std::vector<common::AbiSignature> parsed = [] {
        std::vector<common::AbiSignature> v;
        for (const auto& e : kContractErrors) v.push_back(*common::ParseSignature(e.signature));
        return v;
    }();
    return parsed;
}

AbiValue U(const Uint256& v) { return AbiValue::Uint(v); }
AbiValue U64(std::uint64_t v) { return AbiValue::Uint(v); }
AbiValue B32(const Hash32& h) { return AbiValue::FixedBytes(h); }

AbiValue Ids(const std::vector<std::uint64_t>& ids) {
    std::vector<AbiValue> items;
    for (auto id : ids) items.push_back(U64(id));
    return AbiValue::Array(std::move(items));
}
AbiValue Addresses(const std::vector<Address20>& v) {
    std::vector<AbiValue> items;
    for (const auto& a : v) items.push_back(AbiValue::Address(a));
    return AbiValue::Array(std::move(items));
}
AbiValue Hashes(const std::vector<Hash32>& v) {
    std::vector<AbiValue> items;
    for (const auto& h : v) items.push_back(B32(h));
    return AbiValue::Array(std::move(items));
}

Error BadReturn() { return MakeError(ErrorKind::Internal, "contract_bad_return", "the contract returned unexpected data"); }

// Contract ids and counts are uint256 on chain but always small; anything else is a broken contract.
common::Result<std::uint64_t> Small(const AbiValue& v) {
    auto n = v.word.ToUint64();
    if (!n) return BadReturn();
    return *n;
}

// Names and descriptions written directly on chain may be any bytes; the API answers them as
// UTF-8 with U+FFFD for what is not, never as broken JSON.
std::string Text(const AbiValue& v) { return common::ReplaceInvalidUtf8(v.AsString()); }

// An expiration written directly on chain may be any uint256; one at or past 2^64 seconds
// (half a trillion years) reads as the largest uint64, which means the same: not yet expired.
std::uint64_t Saturated(const AbiValue& v) {
    return v.word.ToUint64().value_or(std::numeric_limits<std::uint64_t>::max());
}

Hash32 WordHash(const AbiValue& v) {
    Hash32 h{};
    std::copy_n(v.bytes.begin(), std::min<std::size_t>(32, v.bytes.size()), h.begin());
    return h;
}

common::Result<std::vector<std::uint64_t>> IdList(const AbiValue& v) {
    std::vector<std::uint64_t> out;
    for (const auto& item : v.items) {
        SIGIL_TRY(n, Small(item));
        out.push_back(*n);
    }
    return out;
}

common::Result<UsageKeyRecord> ToUsageKey(const AbiValue& t) {
    if (t.items.size() != 12) return BadReturn();
    UsageKeyRecord r;
    r.key_hash = t.items[0].word;
    r.expiration = Saturated(t.items[1]);
    r.balance = t.items[2].word;
    r.name = Text(t.items[3]);
    r.description = Text(t.items[4]);
    r.permissions.can_create_groups = t.items[5].boolean;
    r.permissions.can_delete_groups = t.items[6].boolean;
    r.permissions.can_create_pkps = t.items[7].boolean;
    std::vector<std::uint64_t>* lists[] = {&r.permissions.manage_ipfs_ids_in_groups, &r.permissions.add_pkp_to_groups,
                                          &r.permissions.remove_pkp_from_groups, &r.permissions.execute_in_groups};
    for (int i = 0; i < 4; ++i) {
        SIGIL_TRY(ids, IdList(t.items[8 + i]));
        *lists[i] = std::move(ids).value();
    }
    return r;
}

common::Result<GroupRecord> ToGroup(const AbiValue& t) {
    if (t.items.size() != 5) return BadReturn();
    GroupRecord g;
    SIGIL_TRY(id, Small(t.items[0]));
    g.id = *id;
    g.name = Text(t.items[1]);
    g.description = Text(t.items[2]);
    for (const auto& a : t.items[3].items) g.pkps.push_back(a.address);
    for (const auto& h : t.items[4].items) g.cid_hashes.push_back(WordHash(h));
    return g;
}

common::Result<WalletRecord> ToWallet(const AbiValue& t) {
    if (t.items.size() != 4) return BadReturn();
    return WalletRecord{t.items[0].address, t.items[1].word, Text(t.items[2]), Text(t.items[3])};
}

common::Result<ActionRecord> ToAction(const AbiValue& t) {
    if (t.items.size() != 3) return BadReturn();
    return ActionRecord{WordHash(t.items[0]), Text(t.items[1]), Text(t.items[2])};
}

template <typename T, typename F>
common::Result<std::vector<T>> MapList(const common::Result<std::vector<AbiValue>>& items, F convert) {
    if (!items.ok()) return items.error();
    std::vector<T> out;
    out.reserve(items->size());
    for (const auto& item : *items) {
        SIGIL_TRY(r, convert(item));
        out.push_back(std::move(r).value());
    }
    return out;
}

}  // namespace

const std::vector<std::string>& ContractErrorSignatures() {
    static const std::vector<std::string> sigs = [] {
        std::vector<std::string> v;
        for (const auto& e : kContractErrors) v.emplace_back(e.signature);
        return v;
    }();
    return sigs;
}

common::Error MapContractRevert(common::ByteView revert_data) {
    auto info = common::DecodeRevert(revert_data, ParsedErrors());
    if (!info.ok() || info->kind != common::RevertKind::Custom) {
        std::string why = !info.ok() ? "malformed revert data"
                          : info->kind == common::RevertKind::ErrorString ? "reverted: " + info->message
                          : info->kind == common::RevertKind::Panic       ? "panicked: " + info->message
                                                                          : "reverted without a known reason";
        return MakeError(ErrorKind::Internal, "contract_error", "the AccountConfig contract " + why);
    }
    for (const auto& e : kContractErrors) {
        const std::string_view sig = e.signature;
        if (sig.substr(0, sig.find('(')) != info->name) continue;
        std::string message = e.message;
        if (info->name == "UnknownGroup" && info->args.size() == 1) {
            message += " (group " + info->args[0].word.ToDecimal() + ")";
        } else if (info->name == "MissingScope" && info->args.size() == 2) {
            static const char* kScopes[] = {"group:manageActions", "group:addPkp", "group:removePkp", "execute",
                                            "group:create", "group:delete", "pkp:create"};
            auto scope = info->args[0].word.ToUint64().value_or(99);
            message = std::string("the key lacks the ") + (scope < 7 ? kScopes[scope] : "required") + " scope";
            if (scope <= 3) message += " on group " + info->args[1].word.ToDecimal();
        }
        return MakeError(e.kind, SnakeName(e.signature), message);
    }
    return MakeError(ErrorKind::Internal, "contract_error", "unmapped contract error " + info->name);
}

AccountConfigClient::AccountConfigClient(const Address20& contract, CachedReader& reader, ReadCache& cache,
                                         TxSender* sender)
    : m_contract(contract), m_reader(reader), m_cache(cache), m_sender(sender) {}

common::Result<std::vector<AbiValue>> AccountConfigClient::Read(std::string_view signature,
                                                                std::string_view output_types,
                                                                std::vector<AbiValue> args, Mode mode,
                                                                CachedReader::Keep keep) {
    auto call = common::EncodeCall(signature, args);
    if (!call.ok()) return MakeError(ErrorKind::Internal, "abi_encode_failed", call.error().message);
    auto answer = mode == Mode::Fresh     ? m_reader.CallUncached(m_contract, *call)
                  : mode == Mode::Watched ? m_reader.CallWatched(m_contract, *call, keep)
                                          : m_reader.Call(m_contract, *call);
    SIGIL_TRY(out, std::move(answer));
    if (out->reverted) return MapContractRevert(out->data);
    auto types = common::ParseAbiTypeList(output_types);
    if (!types.ok()) return MakeError(ErrorKind::Internal, "abi_bad_type", types.error().message);
    auto values = common::AbiDecode(*types, out->data);
    if (!values.ok()) return BadReturn();
    return values;
}

common::Result<Receipt> AccountConfigClient::Write(std::string_view signature, std::vector<AbiValue> args) {
    if (m_sender == nullptr) return MakeError(ErrorKind::Internal, "no_sender", "this client cannot write");
    auto call = common::EncodeCall(signature, args);
    if (!call.ok()) return MakeError(ErrorKind::Internal, "abi_encode_failed", call.error().message);
    if (m_adopt) {
        Receipt adopted = std::move(*m_adopt);
        m_adopt.reset();
        m_cache.InvalidateEverywhere();
        return adopted;
    }
    CallOutcome revert;
    auto receipt = m_sender->Send(m_contract, *call, &revert);
    // Whatever happened, what any worker cached may now be stale.
    m_cache.InvalidateEverywhere();
    if (!receipt.ok()) {
        if (revert.reverted) return MapContractRevert(revert.data);
        return receipt.error();
    }
    return receipt;
}

common::Result<TxSender::Outcome> AccountConfigClient::TransactionOutcome(const std::string& tx_hash) {
    if (m_sender == nullptr) return MakeError(ErrorKind::Internal, "no_sender", "this client cannot write");
    return m_sender->Lookup(tx_hash);
}

// ---- reads ----

common::Result<KeyInfo> AccountConfigClient::ResolveKey(const Uint256& key_hash) {
    // resolveKey answers (accountHash, isOwner, valid): only a valid key's answer is kept.
    constexpr CachedReader::Keep valid = [](common::ByteView answer) { return answer.size() == 96 && answer[95] == 1; };
    SIGIL_TRY(v, Read("resolveKey(uint256)", "uint256,bool,bool", {U(key_hash)}, Mode::Watched, valid));
    KeyInfo info{(*v)[0].word, (*v)[1].boolean, (*v)[2].boolean};
    if (info.valid && !info.is_owner) {
        // The contract compares expiration with block.timestamp, which stands still on a chain that
        // mines on demand: the worker's clock decides too (DESIGN.md section 3).
        SIGIL_TRY(key, GetUsageKey(info.account_hash, key_hash));
        const auto now = static_cast<std::uint64_t>(std::time(nullptr));
        if (key->expiration != 0 && now >= key->expiration) info.valid = false;
    }
    return info;
}

common::Result<bool> AccountConfigClient::CanExecute(const Uint256& key_hash, const Hash32& cid_hash,
                                                     const Address20& pkp) {
    SIGIL_TRY(v, Read("canExecute(uint256,bytes32,address)", "bool", {U(key_hash), B32(cid_hash), AbiValue::Address(pkp)}));
    return (*v)[0].boolean;
}

common::Result<bool> AccountConfigClient::CanExecuteAction(const Uint256& key_hash, const Hash32& cid_hash) {
    SIGIL_TRY(v, Read("canExecuteAction(uint256,bytes32)", "bool", {U(key_hash), B32(cid_hash)}));
    return (*v)[0].boolean;
}

common::Result<std::pair<Uint256, WalletRecord>> AccountConfigClient::GetWallet(const Address20& wallet) {
    SIGIL_TRY(v, Read("getWallet(address)", std::string("uint256,") + std::string(WALLET_TUPLE), {AbiValue::Address(wallet)}));
    SIGIL_TRY(record, ToWallet((*v)[1]));
    return std::make_pair((*v)[0].word, std::move(record).value());
}

common::Result<bool> AccountConfigClient::KeyHasScope(const Uint256& key_hash, Scope scope, std::uint64_t group_id) {
    auto v = Read("keyHasScope(uint256,uint8,uint256)", "bool",
                  {U(key_hash), U64(static_cast<std::uint64_t>(scope)), U64(group_id)});
    if (!v.ok()) return v.error();
    return (*v)[0].boolean;
}

common::Result<AccountInfo> AccountConfigClient::GetAccount(const Uint256& account_hash) {
    SIGIL_TRY(v, Read("getAccount(uint256)", "address,bool,bool", {U(account_hash)}));
    return AccountInfo{(*v)[0].address, (*v)[1].boolean, (*v)[2].boolean};
}

common::Result<Uint256> AccountConfigClient::AccountOfAdmin(const Address20& admin) {
    SIGIL_TRY(v, Read("adminAccount(address)", "uint256", {AbiValue::Address(admin)}, Mode::Fresh));
    return (*v)[0].word;
}

common::Result<UsageKeyRecord> AccountConfigClient::GetUsageKey(const Uint256& account_hash, const Uint256& key_hash,
                                                                 Freshness freshness) {
    SIGIL_TRY(v, Read("getUsageKey(uint256,uint256)", USAGE_KEY_TUPLE, {U(account_hash), U(key_hash)},
                      freshness == Freshness::Fresh ? Mode::Fresh : Mode::Cached));
    return ToUsageKey((*v)[0]);
}

common::Result<GroupRecord> AccountConfigClient::GetGroup(const Uint256& account_hash, std::uint64_t group_id,
                                                          Freshness freshness) {
    SIGIL_TRY(v, Read("getGroup(uint256,uint256)", GROUP_TUPLE, {U(account_hash), U64(group_id)},
                      freshness == Freshness::Fresh ? Mode::Fresh : Mode::Cached));
    return ToGroup((*v)[0]);
}

common::Result<std::vector<AbiValue>> AccountConfigClient::ReadPage(std::string_view function,
                                                                    std::string_view item_tuple,
                                                                    std::vector<AbiValue> args, Page p) {
    // Every paged view takes uint256 scope arguments, then (offset, size), and returns
    // (item_tuple[] page, uint256 total). The contract bounds the storage one view call reads
    // (PAGE_WORD_BUDGET), so a view page may be shorter than asked: the API page is assembled from as
    // many calls as it takes, each within any node's eth_call gas cap. The calls are separate reads,
    // so a write landing between two of them may shift the items like one landing between two pages.
    std::string signature(function);
    signature += '(';
    for (std::size_t i = 0; i < args.size(); ++i) signature += "uint256,";
    signature += "uint256,uint256)";
    const std::string outputs = std::string(item_tuple) + "[],uint256";
    args.push_back(U64(0));
    args.push_back(U64(0));
    std::vector<AbiValue> items;
    std::uint64_t offset = p.number * p.size;
    // Each call either returns at least one item or ends the page, so this takes at most p.size calls.
    while (items.size() < p.size) {
        const std::uint64_t wanted = p.size - items.size();
        args[args.size() - 2] = U64(offset);
        args[args.size() - 1] = U64(wanted);
        SIGIL_TRY(v, Read(signature, outputs, args));
        auto& got = (*v)[0].items;
        const std::optional<std::uint64_t> total = (*v)[1].word.ToUint64();
        if (got.size() > wanted) return BadReturn();
        if (got.empty()) break;
        offset += got.size();
        std::move(got.begin(), got.end(), std::back_inserter(items));
        if (!total || offset >= *total) break;
    }
    return items;
}

common::Result<std::vector<UsageKeyRecord>> AccountConfigClient::ListUsageKeys(const Uint256& account_hash, Page p) {
    return MapList<UsageKeyRecord>(ReadPage("listUsageKeys", USAGE_KEY_TUPLE, {U(account_hash)}, p), ToUsageKey);
}

common::Result<std::vector<GroupRecord>> AccountConfigClient::ListGroups(const Uint256& account_hash, Page p) {
    return MapList<GroupRecord>(ReadPage("listGroups", GROUP_TUPLE, {U(account_hash)}, p), ToGroup);
}

common::Result<std::vector<WalletRecord>> AccountConfigClient::ListWallets(const Uint256& account_hash, Page p) {
    return MapList<WalletRecord>(ReadPage("listWallets", WALLET_TUPLE, {U(account_hash)}, p), ToWallet);
}

common::Result<std::vector<WalletRecord>> AccountConfigClient::ListWalletsInGroup(const Uint256& account_hash,
                                                                                  std::uint64_t group_id, Page p) {
    return MapList<WalletRecord>(ReadPage("listWalletsInGroup", WALLET_TUPLE, {U(account_hash), U64(group_id)}, p),
                                 ToWallet);
}

common::Result<std::vector<ActionRecord>> AccountConfigClient::ListActions(const Uint256& account_hash, Page p) {
    return MapList<ActionRecord>(ReadPage("listActions", ACTION_TUPLE, {U(account_hash)}, p), ToAction);
}

common::Result<std::vector<ActionRecord>> AccountConfigClient::ListActionsInGroup(const Uint256& account_hash,
                                                                                  std::uint64_t group_id, Page p) {
    return MapList<ActionRecord>(ReadPage("listActionsInGroup", ACTION_TUPLE, {U(account_hash), U64(group_id)}, p),
                                 ToAction);
}

common::Result<std::vector<Address20>> AccountConfigClient::GetApiPayers() {
    SIGIL_TRY(v, Read("getApiPayers()", "address[]", {}));
    std::vector<Address20> out;
    for (const auto& a : (*v)[0].items) out.push_back(a.address);
    return out;
}

common::Result<Address20> AccountConfigClient::AdminPayer() {
    SIGIL_TRY(v, Read("adminPayer()", "address", {}));
    return (*v)[0].address;
}

// ---- writes ----

namespace {
common::Status Done(const common::Result<Receipt>& r) {
    if (!r.ok()) return r.error();
    return common::Success();
}
AbiValue Str(const std::string& s) { return AbiValue::String(s); }
}  // namespace

common::Status AccountConfigClient::NewAccount(const Uint256& account_hash, const Address20& admin) {
    return Done(Write("newAccount(uint256,address)", {U(account_hash), AbiValue::Address(admin)}));
}

common::Status AccountConfigClient::SetUsageApiKey(const Uint256& account, const Uint256& caller,
                                                   const Uint256& key_hash, std::uint64_t expiration,
                                                   const Uint256& balance, const std::string& name,
                                                   const std::string& description, const Permissions& p) {
    return Done(Write("relaySetUsageApiKey(uint256,uint256,uint256,uint256,uint256,string,string,bool,bool,bool,"
                      "uint256[],uint256[],uint256[],uint256[])",
                      {U(account), U(caller), U(key_hash), U64(expiration), U(balance), Str(name), Str(description),
                       AbiValue::Bool(p.can_create_groups), AbiValue::Bool(p.can_delete_groups),
                       AbiValue::Bool(p.can_create_pkps), Ids(p.manage_ipfs_ids_in_groups), Ids(p.add_pkp_to_groups),
                       Ids(p.remove_pkp_from_groups), Ids(p.execute_in_groups)}));
}

common::Status AccountConfigClient::UpdateUsageApiKeyMetadata(const Uint256& account, const Uint256& caller,
                                                              const Uint256& key_hash, const std::string& name,
                                                              const std::string& description) {
    return Done(Write("updateUsageApiKeyMetadata(uint256,uint256,uint256,string,string)",
                      {U(account), U(caller), U(key_hash), Str(name), Str(description)}));
}

common::Status AccountConfigClient::RemoveUsageApiKey(const Uint256& account, const Uint256& caller,
                                                      const Uint256& key_hash) {
    return Done(Write("removeUsageApiKey(uint256,uint256,uint256)", {U(account), U(caller), U(key_hash)}));
}

common::Result<std::uint64_t> AccountConfigClient::AddGroup(const Uint256& account, const Uint256& caller,
                                                            const std::string& name, const std::string& description,
                                                            const std::vector<Address20>& pkps,
                                                            const std::vector<Hash32>& cid_hashes) {
    auto r = Write("addGroup(uint256,uint256,string,string,address[],bytes32[])",
                   {U(account), U(caller), Str(name), Str(description), Addresses(pkps), Hashes(cid_hashes)});
    if (!r.ok()) return r.error();
    static const Hash32 kGroupAdded = common::Keccak256Hash(std::string_view("GroupAdded(uint256,uint256)"));
    for (const auto& log : r->logs) {
        if (log.topics.size() == 3 && log.topics[0] == kGroupAdded && Uint256::FromWord(log.topics[1]) == account) {
            auto id = Uint256::FromWord(log.topics[2]).ToUint64();
            if (id) return *id;
        }
    }
    return MakeError(ErrorKind::Internal, "contract_bad_return", "the GroupAdded event is missing from the receipt");
}

common::Status AccountConfigClient::UpdateGroup(const Uint256& account, const Uint256& caller, std::uint64_t group_id,
                                                const std::string& name, const std::string& description,
                                                const std::vector<Address20>& pkps,
                                                const std::vector<Hash32>& cid_hashes) {
    return Done(Write("updateGroup(uint256,uint256,uint256,string,string,address[],bytes32[])",
                      {U(account), U(caller), U64(group_id), Str(name), Str(description), Addresses(pkps),
                       Hashes(cid_hashes)}));
}

common::Status AccountConfigClient::RemoveGroup(const Uint256& account, const Uint256& caller, std::uint64_t group_id) {
    return Done(Write("removeGroup(uint256,uint256,uint256)", {U(account), U(caller), U64(group_id)}));
}

common::Status AccountConfigClient::AddActionToGroup(const Uint256& account, const Uint256& caller,
                                                     std::uint64_t group_id, const Hash32& cid_hash) {
    return Done(Write("addActionToGroup(uint256,uint256,uint256,bytes32)",
                      {U(account), U(caller), U64(group_id), B32(cid_hash)}));
}

common::Status AccountConfigClient::RemoveActionFromGroup(const Uint256& account, const Uint256& caller,
                                                          std::uint64_t group_id, const Hash32& cid_hash) {
    return Done(Write("removeActionFromGroup(uint256,uint256,uint256,bytes32)",
                      {U(account), U(caller), U64(group_id), B32(cid_hash)}));
}

common::Status AccountConfigClient::AddPkpToGroup(const Uint256& account, const Uint256& caller,
                                                  std::uint64_t group_id, const Address20& pkp) {
    return Done(Write("addPkpToGroup(uint256,uint256,uint256,address)",
                      {U(account), U(caller), U64(group_id), AbiValue::Address(pkp)}));
}

common::Status AccountConfigClient::RemovePkpFromGroup(const Uint256& account, const Uint256& caller,
                                                       std::uint64_t group_id, const Address20& pkp) {
    return Done(Write("removePkpFromGroup(uint256,uint256,uint256,address)",
                      {U(account), U(caller), U64(group_id), AbiValue::Address(pkp)}));
}

common::Status AccountConfigClient::RegisterWalletDerivation(const Uint256& account, const Uint256& caller,
                                                             const Address20& wallet, const Uint256& path,
                                                             const std::string& name, const std::string& description) {
    return Done(Write("relayRegisterWalletDerivation(uint256,uint256,address,uint256,string,string)",
                      {U(account), U(caller), AbiValue::Address(wallet), U(path), Str(name), Str(description)}));
}

common::Status AccountConfigClient::AddAction(const Uint256& account, const Uint256& caller, const Hash32& cid_hash,
                                              const std::string& name, const std::string& description) {
    return Done(Write("addAction(uint256,uint256,bytes32,string,string)",
                      {U(account), U(caller), B32(cid_hash), Str(name), Str(description)}));
}

common::Status AccountConfigClient::UpdateActionMetadata(const Uint256& account, const Uint256& caller,
                                                         const Hash32& cid_hash, const std::string& name,
                                                         const std::string& description) {
    return Done(Write("updateActionMetadata(uint256,uint256,bytes32,string,string)",
                      {U(account), U(caller), B32(cid_hash), Str(name), Str(description)}));
}

common::Status AccountConfigClient::DeleteAction(const Uint256& account, const Uint256& caller,
                                                 const Hash32& cid_hash) {
    return Done(Write("deleteAction(uint256,uint256,bytes32)", {U(account), U(caller), B32(cid_hash)}));
}

common::Status AccountConfigClient::ConvertToChainSecuredAccount(const Uint256& account, const Address20& new_admin) {
    return Done(Write("convertToChainSecuredAccount(uint256,address)", {U(account), AbiValue::Address(new_admin)}));
}

}  // namespace sigil::workers
