// Typed client of the AccountConfig contract: cached reads, relayed writes, revert -> error mapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/abi.h"
#include "common/bytes.h"
#include "common/result.h"
#include "common/uint256.h"
#include "workers/chain/cache.h"
#include "workers/chain/tx_sender.h"

namespace sigil::workers {

// Scope numbers as the contract defines them (SCOPE_* constants).
enum class Scope : std::uint8_t {
    ManageActions = 0, AddPkp = 1, RemovePkp = 2, Execute = 3, CreateGroups = 4, DeleteGroups = 5, CreatePkps = 6,
};

// Maps the contract's revert data to an error for the HTTP layer: 403 permission, 404 unknown,
// 409 conflict, 400 invalid (the grouping documented at the top of AccountConfig.sol). Error(string),
// panics and unknown selectors are Internal: our contract never produces them for client mistakes.
common::Error MapContractRevert(common::ByteView revert_data);

// The custom error signatures the client knows, for tests that compare them with the compiled ABI.
const std::vector<std::string>& ContractErrorSignatures();

struct KeyInfo {
    common::Uint256 account_hash;  // zero when the key is unknown
    bool is_owner = false;
    bool valid = false;            // live now: not revoked or expired; an account key only while managed
};

struct AccountInfo {
    common::Address20 admin{};
    bool managed = false;
    bool exists = false;
};

struct Permissions {
    bool can_create_groups = false;
    bool can_delete_groups = false;
    bool can_create_pkps = false;
    std::vector<std::uint64_t> manage_ipfs_ids_in_groups;
    std::vector<std::uint64_t> add_pkp_to_groups;
    std::vector<std::uint64_t> remove_pkp_from_groups;
    std::vector<std::uint64_t> execute_in_groups;
};

struct UsageKeyRecord {
    common::Uint256 key_hash;
    std::uint64_t expiration = 0;  // unix seconds, 0 = never
    common::Uint256 balance;
    std::string name;
    std::string description;
    Permissions permissions;
};

struct GroupRecord {
    std::uint64_t id = 0;
    std::string name;
    std::string description;
    std::vector<common::Address20> pkps;
    std::vector<common::Hash32> cid_hashes;
};

struct WalletRecord {
    common::Address20 address{};
    common::Uint256 derivation_path;
    std::string name;
    std::string description;
};

struct ActionRecord {
    common::Hash32 cid_hash{};
    std::string name;
    std::string description;
};

struct Page {
    std::uint64_t number = 0;  // 0-based
    std::uint64_t size = 10;   // 1..100
};

class AccountConfigClient {
public:
    // `sender` may be null for a read-only client (writes then fail with Internal "no_sender").
    AccountConfigClient(const common::Address20& contract, CachedReader& reader, ReadCache& cache, TxSender* sender);

    // --- reads (cached briefly) ---
    // A revoked or expired key stops working on the very next request, on every worker, when it was
    // removed through us (the write moves the pool's epoch), and within 2 x [chain] event_poll_ms of
    // its block when removed straight on the contract (the pool's event watch). Only valid answers
    // are cached, and only while the watch is current: a key added on chain works at once, and
    // without the chain the answer comes from the node, so an outage fails closed.
    common::Result<KeyInfo> ResolveKey(const common::Uint256& key_hash);
    common::Result<bool> CanExecute(const common::Uint256& key_hash, const common::Hash32& cid_hash,
                                    const common::Address20& pkp);
    // A run without a PKP: some group the key may execute on lists the CID.
    common::Result<bool> CanExecuteAction(const common::Uint256& key_hash, const common::Hash32& cid_hash);
    // The account a wallet (PKP) is registered to (zero when none) and its record.
    common::Result<std::pair<common::Uint256, WalletRecord>> GetWallet(const common::Address20& wallet);
    common::Result<bool> KeyHasScope(const common::Uint256& key_hash, Scope scope, std::uint64_t group_id);
    common::Result<AccountInfo> GetAccount(const common::Uint256& account_hash);
    // The account `admin` administers (zero when none). Never cached: the signature flows ask right
    // after a direct-path newChainSecuredAccount or an ownership change.
    common::Result<common::Uint256> AccountOfAdmin(const common::Address20& admin);
    // Fresh: straight from the node, for a read whose result is written back (a stale cached
    // record would silently undo a change made meanwhile, e.g. directly on chain).
    enum class Freshness { Cached, Fresh };
    common::Result<UsageKeyRecord> GetUsageKey(const common::Uint256& account_hash, const common::Uint256& key_hash,
                                               Freshness freshness = Freshness::Cached);
    common::Result<GroupRecord> GetGroup(const common::Uint256& account_hash, std::uint64_t group_id,
                                         Freshness freshness = Freshness::Cached);
    common::Result<std::vector<UsageKeyRecord>> ListUsageKeys(const common::Uint256& account_hash, Page page);
    common::Result<std::vector<GroupRecord>> ListGroups(const common::Uint256& account_hash, Page page);
    common::Result<std::vector<WalletRecord>> ListWallets(const common::Uint256& account_hash, Page page);
    common::Result<std::vector<WalletRecord>> ListWalletsInGroup(const common::Uint256& account_hash,
                                                                 std::uint64_t group_id, Page page);
    common::Result<std::vector<ActionRecord>> ListActions(const common::Uint256& account_hash, Page page);
    common::Result<std::vector<ActionRecord>> ListActionsInGroup(const common::Uint256& account_hash,
                                                                 std::uint64_t group_id, Page page);
    common::Result<std::vector<common::Address20>> GetApiPayers();
    common::Result<common::Address20> AdminPayer();

    // --- relayed writes (caller_key_hash: the key the HTTP caller used; the account hash = owner) ---
    // SetUsageApiKey and RegisterWalletDerivation send the contract's relay* forms; the direct-path
    // forms (the spec's parameter lists) are the admin wallet's and never sent by the worker.
    common::Status NewAccount(const common::Uint256& account_hash, const common::Address20& admin);
    common::Status SetUsageApiKey(const common::Uint256& account, const common::Uint256& caller,
                                  const common::Uint256& key_hash, std::uint64_t expiration,
                                  const common::Uint256& balance, const std::string& name,
                                  const std::string& description, const Permissions& permissions);
    common::Status UpdateUsageApiKeyMetadata(const common::Uint256& account, const common::Uint256& caller,
                                             const common::Uint256& key_hash, const std::string& name,
                                             const std::string& description);
    common::Status RemoveUsageApiKey(const common::Uint256& account, const common::Uint256& caller,
                                     const common::Uint256& key_hash);
    // Returns the new group's id (from the GroupAdded event).
    common::Result<std::uint64_t> AddGroup(const common::Uint256& account, const common::Uint256& caller,
                                           const std::string& name, const std::string& description,
                                           const std::vector<common::Address20>& pkps,
                                           const std::vector<common::Hash32>& cid_hashes);
    common::Status UpdateGroup(const common::Uint256& account, const common::Uint256& caller, std::uint64_t group_id,
                               const std::string& name, const std::string& description,
                               const std::vector<common::Address20>& pkps,
                               const std::vector<common::Hash32>& cid_hashes);
    common::Status RemoveGroup(const common::Uint256& account, const common::Uint256& caller, std::uint64_t group_id);
    common::Status AddActionToGroup(const common::Uint256& account, const common::Uint256& caller,
                                    std::uint64_t group_id, const common::Hash32& cid_hash);
    common::Status RemoveActionFromGroup(const common::Uint256& account, const common::Uint256& caller,
                                         std::uint64_t group_id, const common::Hash32& cid_hash);
    common::Status AddPkpToGroup(const common::Uint256& account, const common::Uint256& caller,
                                 std::uint64_t group_id, const common::Address20& pkp);
    common::Status RemovePkpFromGroup(const common::Uint256& account, const common::Uint256& caller,
                                      std::uint64_t group_id, const common::Address20& pkp);
    common::Status RegisterWalletDerivation(const common::Uint256& account, const common::Uint256& caller,
                                            const common::Address20& wallet, const common::Uint256& path,
                                            const std::string& name, const std::string& description);
    common::Status AddAction(const common::Uint256& account, const common::Uint256& caller,
                             const common::Hash32& cid_hash, const std::string& name, const std::string& description);
    common::Status UpdateActionMetadata(const common::Uint256& account, const common::Uint256& caller,
                                        const common::Hash32& cid_hash, const std::string& name,
                                        const std::string& description);
    common::Status DeleteAction(const common::Uint256& account, const common::Uint256& caller,
                                const common::Hash32& cid_hash);
    common::Status ConvertToChainSecuredAccount(const common::Uint256& account, const common::Address20& new_admin);

    // Transactions whose receipt did not arrive in time (DESIGN.md section 9, safe retries).
    common::Result<TxSender::Outcome> TransactionOutcome(const std::string& tx_hash);
    // The next write sends nothing and answers `receipt` instead (of a successful transaction a
    // timed-out request sent, from TransactionOutcome): a retry completes the first request's
    // answer from the chain without writing twice. Cleared by that write, or by AdoptNothing().
    void AdoptNextWrite(Receipt receipt) { m_adopt = std::move(receipt); }
    void AdoptNothing() { m_adopt.reset(); }

private:
    // Cached: the read cache's rules. Watched: key validity (CachedReader::CallWatched; `keep` says
    // which answers may be stored). Fresh: always from the node.
    enum class Mode { Cached, Watched, Fresh };
    common::Result<std::vector<common::AbiValue>> Read(std::string_view signature, std::string_view output_types,
                                                       std::vector<common::AbiValue> args, Mode mode = Mode::Cached,
                                                       CachedReader::Keep keep = nullptr);
    common::Result<Receipt> Write(std::string_view signature, std::vector<common::AbiValue> args);
    // One API page of a paged view: `function`'s uint256 arguments `args`, then (offset, size), as
    // many calls as the contract's per-call storage budget takes; answers the items (`item_tuple`s).
    common::Result<std::vector<common::AbiValue>> ReadPage(std::string_view function, std::string_view item_tuple,
                                                           std::vector<common::AbiValue> args, Page page);

    common::Address20 m_contract;
    CachedReader& m_reader;
    ReadCache& m_cache;
    TxSender* m_sender;
    std::optional<Receipt> m_adopt;  // AdoptNextWrite
};

}  // namespace sigil::workers
