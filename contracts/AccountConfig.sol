// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @title AccountConfig: Sigil's on-chain account configuration (keys, scopes, groups, PKPs, actions).
///
/// Who may write (DESIGN.md section 3):
///  * msg.sender is the account's admin wallet: owner rights (callerKeyHash is ignored; pass 0), or
///  * msg.sender is an API payer AND the account is managed: the relay names the key hash the HTTP
///    caller used (callerKeyHash). The account hash gives owner rights; a usage key hash must be a
///    live key of that account (not revoked, not expired) holding the scope for that group.
///  Anything else reverts. After conversion to ChainSecured (managed = false) API payers can no
///  longer write for the account. The account hash counts as the owner's key only while the admin is
///  still the wallet of that key (recorded at creation): after an accepted ownership transfer the old
///  master API key has no rights at all, over the relay or as a credential.
///
/// Two forms of the PKP and usage-key writes:
///  * direct path (the spec's parameter lists, so clients of the deployed implementation work
///    unchanged): registerWalletDerivation(adminHash, ...), setUsageApiKey(adminHash, usageKeyHash, ...);
///    msg.sender must be the admin wallet, there is no caller-key argument;
///  * relayed (relayRegisterWalletDerivation, relaySetUsageApiKey): sent by an API payer naming the
///    HTTP caller's key hash, as every other relayed write.
///
/// Ownership moves in two steps: transferOwnership(newOwner) by the admin proposes, acceptOwnership
/// (accountHash) by the proposed wallet completes, so no wallet becomes an admin without its consent.
/// Conversion by the admin wallet follows the same rule: convertToChainSecuredAccount(hash, newAdmin)
/// converts at once only when newAdmin is the caller itself; naming another wallet proposes
/// (ConversionProposed), and acceptConversion(hash) by that wallet completes. (Otherwise a throw-away
/// account could make any wallet its admin: AdminTaken for the victim forever, and the victim's
/// billing customer, so its credit, serving the squatter.) The API payer converts at once: the HTTP
/// flow carries the new admin's EIP-712 ConvertAccount signature, which the worker and keyd verify.
///
/// A write that would change nothing reverts with NothingToChange (the relay would pay for a no-op).
///
/// Scopes (uint8 in MissingScope and keyHasScope):
///   0 group:manageActions (per group)   1 group:addPkp (per group)   2 group:removePkp (per group)
///   3 execute (per group)               4 group:create               5 group:delete
///   6 pkp:create
///  Per-group scope lists hold group ids; an entry 0 is the wildcard "all groups".
///  Owner-only (no scope grants them): setUsageApiKey, updateUsageApiKeyMetadata, removeUsageApiKey,
///  transferOwnership (admin wallet only, never relayed), convertToChainSecuredAccount (admin wallet,
///  or an API payer while the account's own key still owns it).
///  Decisions where the spec is silent:
///   * addGroup with initial members: a usage key needs group:create, plus addPkp(new id) if pkps is
///     non-empty and manageActions(new id) if cidHashes is non-empty (in practice the wildcard [0]).
///   * updateGroup: a usage key needs manageActions(group) to change the CID set or the name or
///     description, addPkp(group) if any PKP is added, removePkp(group) if any PKP is removed.
///   * addAction / updateActionMetadata / deleteAction (standalone metadata): owner, or a usage key
///     whose manageActions list is non-empty. Deleting metadata never touches groups.
///   * Group ids are never reused, so a scope naming a deleted group never reaches a later group.
///   * A revoked usage key hash stays bound to its account forever (it can be re-added there, never
///     claimed by another account), so a leaked-then-revoked key never resolves to a stranger's account.
///   * No API payer or admin payer may be an account admin (a payer as admin would give every relayed
///     usage key owner rights).
///
/// Errors, by the HTTP status the worker maps them to:
///   403 permission: NotAuthorized, OwnerOnly, MissingScope(uint8,uint256), NotManaged, KeyExpired,
///                   NotContractOwner, NotApiPayer
///   404 unknown:    UnknownAccount, UnknownGroup(uint256), UnknownKey, UnknownAction, UnknownPkp(address),
///                   NotInGroup
///   409 conflict:   KeyHashTaken, AdminTaken, PathTaken, WalletTaken, AlreadyUnmanaged, AlreadyInGroup,
///                   ActionExists, PayerExists, NothingToChange
///   400 invalid:    ZeroKeyHash, ZeroPath, ZeroAddress, ZeroCid, NameTooLong, DescriptionTooLong,
///                   TooMany, Duplicate, InvalidAdmin
///
/// Events: one per state change; every account event has accountHash as its first indexed topic so
/// the worker's cache can invalidate per account from logs.
///
/// Scale: every view reads a bounded amount of storage, whatever the account holds, so it answers
/// within any node's eth_call gas cap.
///  * Paged views (list*) return (page, total): items [offset, offset + page.length) in list order and
///    the list's length. A page holds at most `size` (<= MAX_PAGE_SIZE) items and at most
///    PAGE_WORD_BUDGET storage words of them (one item alone may exceed it), so it can be shorter than
///    asked: continue at offset + page.length while that is below total.
///  * Execution checks do not walk the account's groups: per CID, the groups listing it are chained
///    (a doubly linked list from the account's cidHead[cid] through the groups' cidPos[cid] words), so
///    canExecute reads only the groups listing the run's CID (a scoped key: only its own execute list,
///    at most MAX_ITEMS_PER_CALL ids), and canExecuteAction for the owner is one read. Listing a CID
///    costs one storage word more when the CID is new to the account (the head), a few thousand gas
///    otherwise; removing a group unlinks each of its CIDs.
contract AccountConfig {
    // ---- limits (keep gas bounded) ----
    uint256 public constant MAX_NAME_BYTES = 256;
    uint256 public constant MAX_DESCRIPTION_BYTES = 4096;
    uint256 public constant MAX_ITEMS_PER_CALL = 100;
    uint256 public constant MAX_GROUP_ITEMS = 256; // PKPs, and CIDs, per group
    uint256 public constant MAX_GROUPS = 1024; // per account
    uint256 public constant MAX_PAGE_SIZE = 100;
    // Storage words one page view reads at most. At ~2,400 gas per cold word that is ~10M gas: under
    // anvil's eth_call cap (the 30M block gas limit), geth's (50M) and EIP-7825's 2^24 per transaction.
    // (A page of 100 full groups is ~65,000 words, ~160M gas in one call.)
    uint256 public constant PAGE_WORD_BUDGET = 4096;
    // Fields of a Group.cidPos word.
    uint256 private constant CID_INDEX = 0;
    uint256 private constant CID_NEXT = 64;
    uint256 private constant CID_PREV = 128;

    uint8 public constant SCOPE_MANAGE_ACTIONS = 0;
    uint8 public constant SCOPE_ADD_PKP = 1;
    uint8 public constant SCOPE_REMOVE_PKP = 2;
    uint8 public constant SCOPE_EXECUTE = 3;
    uint8 public constant SCOPE_CREATE_GROUPS = 4;
    uint8 public constant SCOPE_DELETE_GROUPS = 5;
    uint8 public constant SCOPE_CREATE_PKPS = 6;

    // ---- errors ----
    error NotAuthorized();
    error OwnerOnly();
    error MissingScope(uint8 scope, uint256 groupId);
    error NotManaged();
    error KeyExpired();
    error NotContractOwner();
    error NotApiPayer();

    error UnknownAccount();
    error UnknownGroup(uint256 groupId);
    error UnknownKey();
    error UnknownAction();
    error UnknownPkp(address pkp);
    error NotInGroup();

    error KeyHashTaken();
    error AdminTaken();
    error PathTaken();
    error WalletTaken();
    error AlreadyUnmanaged();
    error AlreadyInGroup();
    error ActionExists();
    error PayerExists();
    error NothingToChange();

    error ZeroKeyHash();
    error ZeroPath();
    error ZeroAddress();
    error ZeroCid();
    error NameTooLong();
    error DescriptionTooLong();
    error TooMany();
    error Duplicate();
    error InvalidAdmin();

    // ---- events ----
    event ContractOwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event ApiPayerAdded(address indexed payer);
    event ApiPayerRemoved(address indexed payer);
    event AdminPayerSet(address indexed payer);

    event AccountCreated(uint256 indexed accountHash, address indexed admin, bool managed);
    event AccountConverted(uint256 indexed accountHash, address indexed previousAdmin, address indexed newAdmin);
    event ConversionProposed(uint256 indexed accountHash, address indexed admin, address indexed newAdmin);
    event OwnershipTransferStarted(uint256 indexed accountHash, address indexed owner, address indexed pendingOwner);
    event OwnershipTransferred(uint256 indexed accountHash, address indexed previousOwner, address indexed newOwner);
    event UsageKeySet(uint256 indexed accountHash, uint256 indexed keyHash);
    event UsageKeyMetadataUpdated(uint256 indexed accountHash, uint256 indexed keyHash);
    event UsageKeyRemoved(uint256 indexed accountHash, uint256 indexed keyHash);
    event GroupAdded(uint256 indexed accountHash, uint256 indexed groupId);
    event GroupUpdated(uint256 indexed accountHash, uint256 indexed groupId);
    event GroupRemoved(uint256 indexed accountHash, uint256 indexed groupId);
    event ActionAddedToGroup(uint256 indexed accountHash, uint256 indexed groupId, bytes32 cidHash);
    event ActionRemovedFromGroup(uint256 indexed accountHash, uint256 indexed groupId, bytes32 cidHash);
    event PkpAddedToGroup(uint256 indexed accountHash, uint256 indexed groupId, address pkp);
    event PkpRemovedFromGroup(uint256 indexed accountHash, uint256 indexed groupId, address pkp);
    event WalletRegistered(uint256 indexed accountHash, address indexed wallet, uint256 derivationPath);
    event ActionAdded(uint256 indexed accountHash, bytes32 indexed cidHash);
    event ActionMetadataUpdated(uint256 indexed accountHash, bytes32 indexed cidHash);
    event ActionDeleted(uint256 indexed accountHash, bytes32 indexed cidHash);

    // ---- storage ----
    struct UsageKey {
        bool exists;
        bool canCreateGroups;
        bool canDeleteGroups;
        bool canCreatePkps;
        uint256 expiration; // unix seconds, 0 = never
        uint256 balance;
        string name;
        string description;
        uint256[][4] groupScopes; // indexed by SCOPE_MANAGE_ACTIONS .. SCOPE_EXECUTE
    }

    struct Group {
        bool exists;
        string name;
        string description;
        address[] pkps;
        mapping(address => uint256) pkpPos; // index + 1
        bytes32[] cids;
        // One word per listed CID (zero: not listed), so chaining it costs no extra storage word:
        // bits 0-63 its index + 1 in cids; 64-127 and 128-191 the next and previous group ids in the
        // account's chain of groups listing the CID (0: none).
        mapping(bytes32 => uint256) cidPos;
    }

    struct ActionMeta {
        string name;
        string description;
    }

    struct Wallet {
        uint256 accountHash;
        uint256 derivationPath;
        string name;
        string description;
    }

    struct Account {
        address admin;
        bool managed;
        bool exists;
        // The wallet of the account's own API key (its secret is that wallet's private key); zero for a
        // wallet-created ChainSecured account, which has no API key.
        address keyWallet;
        address pendingAdmin; // proposed by transferOwnership, zero when none
        address pendingConversion; // proposed by convertToChainSecuredAccount, zero when none
        uint256 lastGroupId;
        uint256[] keyList;
        mapping(uint256 => uint256) keyPos;
        mapping(uint256 => UsageKey) keys;
        uint256[] groupList;
        mapping(uint256 => uint256) groupPos;
        mapping(uint256 => Group) groups;
        address[] walletList;
        mapping(address => uint256) walletPos;
        bytes32[] actionList;
        mapping(bytes32 => uint256) actionPos;
        mapping(bytes32 => ActionMeta) actions;
        // CID -> id of the first live group listing it (0: none), the head of the chain the execution
        // checks walk. Group ids count addGroup calls: 64 bits in the chain never run out.
        mapping(bytes32 => uint256) cidHead;
    }

    // ---- view shapes ----
    struct UsageKeyView {
        uint256 keyHash;
        uint256 expiration;
        uint256 balance;
        string name;
        string description;
        bool canCreateGroups;
        bool canDeleteGroups;
        bool canCreatePkps;
        uint256[] manageIpfsIdsInGroups;
        uint256[] addPkpToGroups;
        uint256[] removePkpFromGroups;
        uint256[] executeInGroups;
    }

    struct GroupView {
        uint256 id;
        string name;
        string description;
        address[] pkps;
        bytes32[] cidHashes;
    }

    struct WalletView {
        address wallet;
        uint256 derivationPath;
        string name;
        string description;
    }

    struct ActionView {
        bytes32 cidHash;
        string name;
        string description;
    }

    address public owner;
    address public adminPayer;
    address[] private s_apiPayers;
    mapping(address => uint256) private s_apiPayerPos; // index + 1

    mapping(uint256 => Account) private s_accounts;
    /// keyHash -> accountHash for every account hash and usage key hash ever used (never cleared).
    mapping(uint256 => uint256) public keyAccount;
    /// admin wallet -> accountHash (a wallet administers at most one account).
    mapping(address => uint256) public adminAccount;
    /// derivation path -> accountHash.
    mapping(uint256 => uint256) public pathAccount;
    mapping(address => Wallet) private s_wallets;

    constructor() {
        owner = msg.sender;
        emit ContractOwnershipTransferred(address(0), msg.sender);
    }

    // =====================================================================================
    // Contract administration (contract owner)
    // =====================================================================================

    modifier onlyContractOwner() {
        if (msg.sender != owner) revert NotContractOwner();
        _;
    }

    function transferContractOwnership(address newOwner) external onlyContractOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit ContractOwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function addApiPayer(address payer) external onlyContractOwner {
        _addApiPayer(payer);
    }

    function removeApiPayer(address payer) external onlyContractOwner {
        if (s_apiPayerPos[payer] == 0) revert NotApiPayer();
        _removeAddress(s_apiPayers, s_apiPayerPos, payer);
        emit ApiPayerRemoved(payer);
    }

    /// Replaces the whole payer set.
    function setApiPayers(address[] calldata payers) external onlyContractOwner {
        if (payers.length > MAX_ITEMS_PER_CALL) revert TooMany();
        while (s_apiPayers.length > 0) {
            address p = s_apiPayers[s_apiPayers.length - 1];
            _removeAddress(s_apiPayers, s_apiPayerPos, p);
            emit ApiPayerRemoved(p);
        }
        for (uint256 i = 0; i < payers.length; i++) _addApiPayer(payers[i]);
    }

    function setAdminPayer(address payer) external onlyContractOwner {
        if (payer == address(0)) revert ZeroAddress();
        if (adminAccount[payer] != 0) revert InvalidAdmin();
        adminPayer = payer;
        emit AdminPayerSet(payer);
    }

    function _addApiPayer(address payer) private {
        if (payer == address(0)) revert ZeroAddress();
        if (s_apiPayerPos[payer] != 0) revert PayerExists();
        if (adminAccount[payer] != 0) revert InvalidAdmin();
        _pushAddress(s_apiPayers, s_apiPayerPos, payer);
        emit ApiPayerAdded(payer);
    }

    // =====================================================================================
    // Accounts
    // =====================================================================================

    /// API mode: an API payer creates a managed account whose admin is the wallet of the key's secret.
    function newAccount(uint256 apiKeyHash, address adminWallet) external {
        if (s_apiPayerPos[msg.sender] == 0) revert NotApiPayer();
        _createAccount(apiKeyHash, adminWallet, true);
    }

    /// ChainSecured mode, created by the wallet itself: apiKeyHash = keccak256 of the 20-byte address.
    function newChainSecuredAccount() public returns (uint256 apiKeyHash) {
        apiKeyHash = uint256(keccak256(abi.encodePacked(msg.sender)));
        _createAccount(apiKeyHash, msg.sender, false);
    }

    /// The deployed implementation's signature of the same call (its SDK's first ChainSecured call), so
    /// its clients work unchanged. No account metadata is kept on chain, so the name and description
    /// are checked as any name is, then dropped.
    function newChainSecuredAccount(string calldata name, string calldata description)
        external
        returns (uint256 apiKeyHash)
    {
        _checkText(name, description);
        return newChainSecuredAccount();
    }

    /// The spec's parameter list. The admin wallet, or an API payer relaying for the master key: the
    /// payer only while the account's own key still owns it (not after an accepted transfer).
    /// The payer, or an admin naming itself, converts at once; an admin naming another wallet only
    /// proposes (that wallet must consent with acceptConversion). Proposing again replaces the proposal.
    function convertToChainSecuredAccount(uint256 apiKeyHash, address newAdmin) external {
        Account storage a = _account(apiKeyHash);
        if (!a.managed) revert AlreadyUnmanaged();
        bool relayed = s_apiPayerPos[msg.sender] != 0 && a.admin == a.keyWallet;
        if (msg.sender != a.admin && !relayed) revert NotAuthorized();
        if (relayed || newAdmin == msg.sender) {
            _convert(a, apiKeyHash, newAdmin);
            return;
        }
        _checkAdminCandidate(newAdmin);
        if (newAdmin == a.pendingConversion) revert NothingToChange();
        if (adminAccount[newAdmin] != 0) revert AdminTaken();
        a.pendingConversion = newAdmin;
        emit ConversionProposed(apiKeyHash, msg.sender, newAdmin);
    }

    /// Completes a proposed conversion, by the proposed wallet itself (its consent).
    function acceptConversion(uint256 accountHash) external {
        Account storage a = _account(accountHash);
        if (a.pendingConversion == address(0) || msg.sender != a.pendingConversion) revert NotAuthorized();
        _convert(a, accountHash, msg.sender);
    }

    function pendingConversion(uint256 accountHash) external view returns (address) {
        return s_accounts[accountHash].pendingConversion;
    }

    function _convert(Account storage a, uint256 accountHash, address newAdmin) private {
        address previous = a.admin;
        _moveAdmin(a, accountHash, newAdmin);
        a.managed = false;
        emit AccountConverted(accountHash, previous, newAdmin);
    }

    /// Step one of two, by the admin wallet only (never relayed); its account is the one it
    /// administers. Proposing again replaces the proposal.
    function transferOwnership(address newOwner) external {
        uint256 accountHash = adminAccount[msg.sender];
        if (accountHash == 0) revert OwnerOnly();
        Account storage a = s_accounts[accountHash];
        _checkAdminCandidate(newOwner);
        if (newOwner == a.admin || newOwner == a.pendingAdmin) revert NothingToChange();
        uint256 held = adminAccount[newOwner];
        if (held != 0) revert AdminTaken();
        a.pendingAdmin = newOwner;
        emit OwnershipTransferStarted(accountHash, msg.sender, newOwner);
    }

    /// Step two, by the proposed wallet itself (a multisig accepts with its own transaction).
    function acceptOwnership(uint256 accountHash) external {
        Account storage a = _account(accountHash);
        if (a.pendingAdmin == address(0) || msg.sender != a.pendingAdmin) revert NotAuthorized();
        address previous = a.admin;
        _moveAdmin(a, accountHash, msg.sender);
        emit OwnershipTransferred(accountHash, previous, msg.sender);
    }

    function pendingOwner(uint256 accountHash) external view returns (address) {
        return s_accounts[accountHash].pendingAdmin;
    }

    function _createAccount(uint256 apiKeyHash, address adminWallet, bool managed) private {
        if (apiKeyHash == 0) revert ZeroKeyHash();
        if (keyAccount[apiKeyHash] != 0) revert KeyHashTaken();
        _checkAdminCandidate(adminWallet);
        if (adminAccount[adminWallet] != 0) revert AdminTaken();
        Account storage a = s_accounts[apiKeyHash];
        a.admin = adminWallet;
        a.managed = managed;
        a.exists = true;
        if (managed) a.keyWallet = adminWallet;
        keyAccount[apiKeyHash] = apiKeyHash;
        adminAccount[adminWallet] = apiKeyHash;
        emit AccountCreated(apiKeyHash, adminWallet, managed);
    }

    function _moveAdmin(Account storage a, uint256 accountHash, address newAdmin) private {
        _checkAdminCandidate(newAdmin);
        uint256 held = adminAccount[newAdmin];
        if (held != 0 && held != accountHash) revert AdminTaken();
        delete adminAccount[a.admin];
        adminAccount[newAdmin] = accountHash;
        a.admin = newAdmin;
        // A proposal made under the previous admin (or before conversion) never survives it.
        a.pendingAdmin = address(0);
        a.pendingConversion = address(0);
    }

    function _checkAdminCandidate(address wallet) private view {
        if (wallet == address(0)) revert ZeroAddress();
        if (s_apiPayerPos[wallet] != 0 || wallet == adminPayer) revert InvalidAdmin();
    }

    // =====================================================================================
    // Usage keys (owner only)
    // =====================================================================================

    /// Direct path (the spec's parameter list): the admin wallet adds a usage key or replaces all of
    /// its permissions and metadata.
    function setUsageApiKey(
        uint256 adminHash,
        uint256 usageKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        bool canCreateGroups,
        bool canDeleteGroups,
        bool canCreatePkps,
        uint256[] calldata manageIpfsIdsInGroups,
        uint256[] calldata addPkpToGroups,
        uint256[] calldata removePkpFromGroups,
        uint256[] calldata executeInGroups
    ) external {
        Account storage a = _account(adminHash);
        if (msg.sender != a.admin) revert NotAuthorized();
        UsageKey storage k = _claimUsageKey(a, adminHash, usageKeyHash);
        bool changed = _setKeyMeta(k, expiration, balance, name, description);
        changed = _setKeyFlags(k, canCreateGroups, canDeleteGroups, canCreatePkps) || changed;
        changed = _setKeyScopes(k, manageIpfsIdsInGroups, addPkpToGroups, removePkpFromGroups, executeInGroups)
            || changed;
        _finishUsageKey(a, adminHash, usageKeyHash, k, changed);
    }

    /// Relayed form: an API payer names the HTTP caller's key hash (owner only).
    function relaySetUsageApiKey(
        uint256 accountHash,
        uint256 callerKeyHash,
        uint256 usageKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        bool canCreateGroups,
        bool canDeleteGroups,
        bool canCreatePkps,
        uint256[] calldata manageIpfsIdsInGroups,
        uint256[] calldata addPkpToGroups,
        uint256[] calldata removePkpFromGroups,
        uint256[] calldata executeInGroups
    ) external {
        Account storage a = _account(accountHash);
        _requireOwner(a, accountHash, callerKeyHash);
        UsageKey storage k = _claimUsageKey(a, accountHash, usageKeyHash);
        bool changed = _setKeyMeta(k, expiration, balance, name, description);
        changed = _setKeyFlags(k, canCreateGroups, canDeleteGroups, canCreatePkps) || changed;
        changed = _setKeyScopes(k, manageIpfsIdsInGroups, addPkpToGroups, removePkpFromGroups, executeInGroups)
            || changed;
        _finishUsageKey(a, accountHash, usageKeyHash, k, changed);
    }

    /// Checks that usageKeyHash may belong to this account; returns its (possibly new) slot.
    function _claimUsageKey(Account storage a, uint256 accountHash, uint256 usageKeyHash)
        private
        view
        returns (UsageKey storage k)
    {
        if (usageKeyHash == 0) revert ZeroKeyHash();
        uint256 bound = keyAccount[usageKeyHash];
        if (usageKeyHash == accountHash || (bound != 0 && bound != accountHash)) revert KeyHashTaken();
        k = a.keys[usageKeyHash];
    }

    function _finishUsageKey(Account storage a, uint256 accountHash, uint256 usageKeyHash, UsageKey storage k, bool changed)
        private
    {
        if (!k.exists) {
            k.exists = true;
            keyAccount[usageKeyHash] = accountHash;
            _pushUint(a.keyList, a.keyPos, usageKeyHash);
        } else if (!changed) {
            revert NothingToChange();
        }
        emit UsageKeySet(accountHash, usageKeyHash);
    }

    function _setKeyMeta(UsageKey storage k, uint256 expiration, uint256 balance, string calldata name, string calldata description)
        private
        returns (bool changed)
    {
        _checkText(name, description);
        changed = k.expiration != expiration || k.balance != balance || !_sameText(k.name, name)
            || !_sameText(k.description, description);
        k.expiration = expiration;
        k.balance = balance;
        k.name = name;
        k.description = description;
    }

    function _setKeyFlags(UsageKey storage k, bool canCreateGroups, bool canDeleteGroups, bool canCreatePkps)
        private
        returns (bool changed)
    {
        changed = k.canCreateGroups != canCreateGroups || k.canDeleteGroups != canDeleteGroups
            || k.canCreatePkps != canCreatePkps;
        k.canCreateGroups = canCreateGroups;
        k.canDeleteGroups = canDeleteGroups;
        k.canCreatePkps = canCreatePkps;
    }

    function _setKeyScopes(
        UsageKey storage k,
        uint256[] calldata manage,
        uint256[] calldata addPkp,
        uint256[] calldata removePkp,
        uint256[] calldata execute
    ) private returns (bool changed) {
        changed = _setIds(k.groupScopes[SCOPE_MANAGE_ACTIONS], manage);
        changed = _setIds(k.groupScopes[SCOPE_ADD_PKP], addPkp) || changed;
        changed = _setIds(k.groupScopes[SCOPE_REMOVE_PKP], removePkp) || changed;
        changed = _setIds(k.groupScopes[SCOPE_EXECUTE], execute) || changed;
    }

    function updateUsageApiKeyMetadata(
        uint256 accountHash,
        uint256 callerKeyHash,
        uint256 usageKeyHash,
        string calldata name,
        string calldata description
    ) external {
        Account storage a = _account(accountHash);
        _requireOwner(a, accountHash, callerKeyHash);
        UsageKey storage k = a.keys[usageKeyHash];
        if (!k.exists) revert UnknownKey();
        _checkText(name, description);
        if (_sameText(k.name, name) && _sameText(k.description, description)) revert NothingToChange();
        k.name = name;
        k.description = description;
        emit UsageKeyMetadataUpdated(accountHash, usageKeyHash);
    }

    function removeUsageApiKey(uint256 accountHash, uint256 callerKeyHash, uint256 usageKeyHash) external {
        Account storage a = _account(accountHash);
        _requireOwner(a, accountHash, callerKeyHash);
        if (!a.keys[usageKeyHash].exists) revert UnknownKey();
        delete a.keys[usageKeyHash];
        _removeUint(a.keyList, a.keyPos, usageKeyHash);
        emit UsageKeyRemoved(accountHash, usageKeyHash);
    }

    // =====================================================================================
    // Groups
    // =====================================================================================

    function addGroup(
        uint256 accountHash,
        uint256 callerKeyHash,
        string calldata name,
        string calldata description,
        address[] calldata pkps,
        bytes32[] calldata cidHashes
    ) external returns (uint256 groupId) {
        Account storage a = _account(accountHash);
        (bool isOwner, UsageKey storage k) = _caller(a, accountHash, callerKeyHash);
        _checkText(name, description);
        if (a.groupList.length >= MAX_GROUPS) revert TooMany();
        if (pkps.length > MAX_ITEMS_PER_CALL || cidHashes.length > MAX_ITEMS_PER_CALL) revert TooMany();
        groupId = ++a.lastGroupId;
        if (!isOwner) {
            // Creating a group pre-filled is creating it plus adding to it: each part needs its scope.
            _requireGroupScope(k, SCOPE_CREATE_GROUPS, 0);
            if (pkps.length > 0) _requireGroupScope(k, SCOPE_ADD_PKP, groupId);
            if (cidHashes.length > 0) _requireGroupScope(k, SCOPE_MANAGE_ACTIONS, groupId);
        }
        Group storage g = a.groups[groupId];
        g.exists = true;
        g.name = name;
        g.description = description;
        for (uint256 i = 0; i < pkps.length; i++) _addPkp(g, accountHash, pkps[i]);
        for (uint256 i = 0; i < cidHashes.length; i++) _addCid(a, g, groupId, cidHashes[i]);
        _pushUint(a.groupList, a.groupPos, groupId);
        emit GroupAdded(accountHash, groupId);
    }

    function removeGroup(uint256 accountHash, uint256 callerKeyHash, uint256 groupId) external {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_DELETE_GROUPS, 0);
        Group storage g = _group(a, groupId);
        // Ids are never reused, so the group's member lists can stay behind unreachable; only the CID
        // chains must forget it (at most MAX_GROUP_ITEMS of them).
        for (uint256 i = 0; i < g.cids.length; i++) _unlinkCid(a, g.cids[i], g.cidPos[g.cids[i]]);
        g.exists = false;
        _removeUint(a.groupList, a.groupPos, groupId);
        emit GroupRemoved(accountHash, groupId);
    }

    /// Replaces the name, the description and both member sets (sets: order is not kept). Members
    /// already listed stay in place, so renaming a full group (MAX_GROUP_ITEMS of each) costs only
    /// the membership reads; at most MAX_ITEMS_PER_CALL of each set may be new in one call.
    function updateGroup(
        uint256 accountHash,
        uint256 callerKeyHash,
        uint256 groupId,
        string calldata name,
        string calldata description,
        address[] calldata pkps,
        bytes32[] calldata cidHashes
    ) external {
        Account storage a = _account(accountHash);
        (bool isOwner, UsageKey storage k) = _caller(a, accountHash, callerKeyHash);
        Group storage g = _group(a, groupId);
        _checkText(name, description);
        if (pkps.length > MAX_GROUP_ITEMS || cidHashes.length > MAX_GROUP_ITEMS) revert TooMany();
        // Bits of what changed: 1 a PKP added, 2 a PKP removed, 4 the CIDs or the text (the scopes
        // addPkp, removePkp and manageActions).
        uint256 changed = _replacePkps(g, accountHash, pkps) | _replaceCids(a, g, groupId, cidHashes);
        if (!_sameText(g.name, name) || !_sameText(g.description, description)) {
            changed |= 4;
            g.name = name;
            g.description = description;
        }
        if (!isOwner) {
            if (changed & 1 != 0) _requireGroupScope(k, SCOPE_ADD_PKP, groupId);
            if (changed & 2 != 0) _requireGroupScope(k, SCOPE_REMOVE_PKP, groupId);
            if (changed & 4 != 0) _requireGroupScope(k, SCOPE_MANAGE_ACTIONS, groupId);
        }
        // Same members (as sets) and same text: a no-op the relay would otherwise pay for.
        if (changed == 0) revert NothingToChange();
        emit GroupUpdated(accountHash, groupId);
    }

    function addActionToGroup(uint256 accountHash, uint256 callerKeyHash, uint256 groupId, bytes32 cidHash) external {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_MANAGE_ACTIONS, groupId);
        Group storage g = _group(a, groupId);
        if (cidHash == bytes32(0)) revert ZeroCid();
        if (g.cidPos[cidHash] != 0) revert AlreadyInGroup();
        if (g.cids.length >= MAX_GROUP_ITEMS) revert TooMany();
        _addCid(a, g, groupId, cidHash);
        emit ActionAddedToGroup(accountHash, groupId, cidHash);
    }

    function removeActionFromGroup(uint256 accountHash, uint256 callerKeyHash, uint256 groupId, bytes32 cidHash)
        external
    {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_MANAGE_ACTIONS, groupId);
        Group storage g = _group(a, groupId);
        uint256 pos = g.cidPos[cidHash];
        if (pos == 0) revert NotInGroup();
        _unlinkCid(a, cidHash, pos);
        uint256 i = _field(pos, CID_INDEX) - 1;
        uint256 last = g.cids.length - 1;
        if (i != last) _moveCid(g, last, i);
        g.cids.pop();
        delete g.cidPos[cidHash];
        emit ActionRemovedFromGroup(accountHash, groupId, cidHash);
    }

    function addPkpToGroup(uint256 accountHash, uint256 callerKeyHash, uint256 groupId, address pkp) external {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_ADD_PKP, groupId);
        Group storage g = _group(a, groupId);
        if (s_wallets[pkp].accountHash != accountHash) revert UnknownPkp(pkp);
        if (g.pkpPos[pkp] != 0) revert AlreadyInGroup();
        if (g.pkps.length >= MAX_GROUP_ITEMS) revert TooMany();
        _pushAddress(g.pkps, g.pkpPos, pkp);
        emit PkpAddedToGroup(accountHash, groupId, pkp);
    }

    function removePkpFromGroup(uint256 accountHash, uint256 callerKeyHash, uint256 groupId, address pkp) external {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_REMOVE_PKP, groupId);
        Group storage g = _group(a, groupId);
        if (g.pkpPos[pkp] == 0) revert NotInGroup();
        _removeAddress(g.pkps, g.pkpPos, pkp);
        emit PkpRemovedFromGroup(accountHash, groupId, pkp);
    }

    function _addPkp(Group storage g, uint256 accountHash, address p) private {
        // A group may list only its own account's PKPs: no account reaches another's key material.
        if (s_wallets[p].accountHash != accountHash) revert UnknownPkp(p);
        if (g.pkpPos[p] != 0) revert Duplicate();
        _pushAddress(g.pkps, g.pkpPos, p);
    }

    /// Makes the group's PKP set exactly `next`: members listed in `next` are first gathered, in the
    /// order of `next`, at the front of g.pkps; what is behind them is dropped; then the new ones (at
    /// most MAX_ITEMS_PER_CALL) are appended. Returns updateGroup's change bits: 1 added, 2 removed.
    function _replacePkps(Group storage g, uint256 accountHash, address[] calldata next)
        private
        returns (uint256 changed)
    {
        uint256 kept;
        uint256 fresh;
        for (uint256 i = 0; i < next.length; i++) {
            uint256 pos = g.pkpPos[next[i]];
            if (pos == 0) {
                fresh++;
                continue;
            }
            if (pos <= kept) revert Duplicate(); // already gathered
            if (pos != kept + 1) {
                address other = g.pkps[kept];
                g.pkps[kept] = next[i];
                g.pkps[pos - 1] = other;
                g.pkpPos[other] = pos;
                g.pkpPos[next[i]] = kept + 1;
            }
            kept++;
        }
        if (fresh > MAX_ITEMS_PER_CALL) revert TooMany();
        if (g.pkps.length > kept) changed = 2;
        while (g.pkps.length > kept) {
            delete g.pkpPos[g.pkps[g.pkps.length - 1]];
            g.pkps.pop();
        }
        for (uint256 i = 0; i < next.length; i++) {
            uint256 pos = g.pkpPos[next[i]];
            if (pos > kept) revert Duplicate(); // appended by this loop already
            if (pos == 0) _addPkp(g, accountHash, next[i]);
        }
        if (g.pkps.length > kept) changed |= 1;
    }

    /// _replacePkps for the CID set, keeping the CID chains. Returns 4 when the set changed.
    function _replaceCids(Account storage a, Group storage g, uint256 groupId, bytes32[] calldata next)
        private
        returns (uint256 changed)
    {
        uint256 kept;
        uint256 fresh;
        for (uint256 i = 0; i < next.length; i++) {
            uint256 pos = _field(g.cidPos[next[i]], CID_INDEX);
            if (pos == 0) {
                fresh++;
                continue;
            }
            if (pos <= kept) revert Duplicate();
            if (pos != kept + 1) _swapCids(g, pos - 1, kept);
            kept++;
        }
        if (fresh > MAX_ITEMS_PER_CALL) revert TooMany();
        if (g.cids.length > kept) changed = 4;
        while (g.cids.length > kept) {
            bytes32 c = g.cids[g.cids.length - 1];
            _unlinkCid(a, c, g.cidPos[c]);
            delete g.cidPos[c];
            g.cids.pop();
        }
        for (uint256 i = 0; i < next.length; i++) {
            uint256 pos = _field(g.cidPos[next[i]], CID_INDEX);
            if (pos > kept) revert Duplicate();
            if (pos == 0) _addCid(a, g, groupId, next[i]);
        }
        if (g.cids.length > kept) changed = 4;
    }

    /// Appends c to the group's CIDs and puts the group at the head of c's chain.
    function _addCid(Account storage a, Group storage g, uint256 groupId, bytes32 c) private {
        if (c == bytes32(0)) revert ZeroCid();
        if (g.cidPos[c] != 0) revert Duplicate();
        uint256 head = a.cidHead[c];
        g.cids.push(c);
        g.cidPos[c] = (g.cids.length << CID_INDEX) | (head << CID_NEXT);
        if (head != 0) _setField(a.groups[head].cidPos, c, CID_PREV, groupId);
        a.cidHead[c] = groupId;
    }

    /// Takes the group whose cidPos[c] word is `pos` out of c's chain (its own word is left as is).
    function _unlinkCid(Account storage a, bytes32 c, uint256 pos) private {
        uint256 next = _field(pos, CID_NEXT);
        uint256 prev = _field(pos, CID_PREV);
        if (prev == 0) a.cidHead[c] = next;
        else _setField(a.groups[prev].cidPos, c, CID_NEXT, next);
        if (next != 0) _setField(a.groups[next].cidPos, c, CID_PREV, prev);
    }

    function _field(uint256 word, uint256 shift) private pure returns (uint256) {
        return (word >> shift) & type(uint64).max;
    }

    function _setField(mapping(bytes32 => uint256) storage pos, bytes32 c, uint256 shift, uint256 value) private {
        pos[c] = (pos[c] & ~(uint256(type(uint64).max) << shift)) | (value << shift);
    }

    /// Moves g.cids[from] to g.cids[to] (overwriting it), keeping its chain links.
    function _moveCid(Group storage g, uint256 from, uint256 to) private {
        bytes32 c = g.cids[from];
        g.cids[to] = c;
        _setField(g.cidPos, c, CID_INDEX, to + 1);
    }

    function _swapCids(Group storage g, uint256 i, uint256 j) private {
        bytes32 ci = g.cids[i];
        _moveCid(g, j, i);
        g.cids[j] = ci;
        _setField(g.cidPos, ci, CID_INDEX, j + 1);
    }

    // =====================================================================================
    // PKP registry
    // =====================================================================================

    /// Direct path (the spec's parameter list): the admin wallet registers a PKP to its account.
    function registerWalletDerivation(
        uint256 adminHash,
        address wallet,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) external {
        Account storage a = _account(adminHash);
        if (msg.sender != a.admin) revert NotAuthorized();
        _registerWallet(a, adminHash, wallet, derivationPath, name, description);
    }

    /// Relayed form: an API payer names the HTTP caller's key hash (pkp:create).
    function relayRegisterWalletDerivation(
        uint256 accountHash,
        uint256 callerKeyHash,
        address wallet,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) external {
        Account storage a = _account(accountHash);
        _requireScope(a, accountHash, callerKeyHash, SCOPE_CREATE_PKPS, 0);
        _registerWallet(a, accountHash, wallet, derivationPath, name, description);
    }

    function _registerWallet(
        Account storage a,
        uint256 accountHash,
        address wallet,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) private {
        if (wallet == address(0)) revert ZeroAddress();
        if (derivationPath == 0) revert ZeroPath();
        if (pathAccount[derivationPath] != 0) revert PathTaken();
        if (s_wallets[wallet].accountHash != 0) revert WalletTaken();
        _checkText(name, description);
        pathAccount[derivationPath] = accountHash;
        Wallet storage w = s_wallets[wallet];
        w.accountHash = accountHash;
        w.derivationPath = derivationPath;
        w.name = name;
        w.description = description;
        _pushAddress(a.walletList, a.walletPos, wallet);
        emit WalletRegistered(accountHash, wallet, derivationPath);
    }

    // =====================================================================================
    // Standalone action metadata
    // =====================================================================================

    function addAction(
        uint256 accountHash,
        uint256 callerKeyHash,
        bytes32 cidHash,
        string calldata name,
        string calldata description
    ) external {
        Account storage a = _account(accountHash);
        _requireActionScope(a, accountHash, callerKeyHash);
        if (cidHash == bytes32(0)) revert ZeroCid();
        if (a.actionPos[cidHash] != 0) revert ActionExists();
        _checkText(name, description);
        _pushBytes32(a.actionList, a.actionPos, cidHash);
        a.actions[cidHash] = ActionMeta(name, description);
        emit ActionAdded(accountHash, cidHash);
    }

    function updateActionMetadata(
        uint256 accountHash,
        uint256 callerKeyHash,
        bytes32 cidHash,
        string calldata name,
        string calldata description
    ) external {
        Account storage a = _account(accountHash);
        _requireActionScope(a, accountHash, callerKeyHash);
        if (a.actionPos[cidHash] == 0) revert UnknownAction();
        _checkText(name, description);
        ActionMeta storage m = a.actions[cidHash];
        if (_sameText(m.name, name) && _sameText(m.description, description)) revert NothingToChange();
        a.actions[cidHash] = ActionMeta(name, description);
        emit ActionMetadataUpdated(accountHash, cidHash);
    }

    function deleteAction(uint256 accountHash, uint256 callerKeyHash, bytes32 cidHash) external {
        Account storage a = _account(accountHash);
        _requireActionScope(a, accountHash, callerKeyHash);
        if (a.actionPos[cidHash] == 0) revert UnknownAction();
        _removeBytes32(a.actionList, a.actionPos, cidHash);
        delete a.actions[cidHash];
        emit ActionDeleted(accountHash, cidHash);
    }

    // =====================================================================================
    // Authorization
    // =====================================================================================

    function _account(uint256 accountHash) private view returns (Account storage a) {
        a = s_accounts[accountHash];
        if (!a.exists) revert UnknownAccount();
    }

    function _group(Account storage a, uint256 groupId) private view returns (Group storage g) {
        g = a.groups[groupId];
        if (!g.exists) revert UnknownGroup(groupId);
    }

    /// Who is writing: the owner (isOwner) or a live usage key k of this account; reverts otherwise.
    function _caller(Account storage a, uint256 accountHash, uint256 callerKeyHash)
        private
        view
        returns (bool isOwner, UsageKey storage k)
    {
        k = a.keys[callerKeyHash];
        if (msg.sender == a.admin) return (true, k);
        if (s_apiPayerPos[msg.sender] == 0) revert NotAuthorized();
        if (!a.managed) revert NotManaged();
        if (callerKeyHash == accountHash) {
            // After an accepted ownership transfer the account's own key is no longer the owner's.
            if (a.admin != a.keyWallet) revert NotAuthorized();
            return (true, k);
        }
        if (!k.exists) revert NotAuthorized();
        if (_expired(k)) revert KeyExpired();
        return (false, k);
    }

    function _requireOwner(Account storage a, uint256 accountHash, uint256 callerKeyHash) private view {
        (bool isOwner,) = _caller(a, accountHash, callerKeyHash);
        if (!isOwner) revert OwnerOnly();
    }

    function _requireScope(Account storage a, uint256 accountHash, uint256 callerKeyHash, uint8 scope, uint256 groupId)
        private
        view
    {
        (bool isOwner, UsageKey storage k) = _caller(a, accountHash, callerKeyHash);
        if (isOwner) return;
        if (!_keyHas(k, scope, groupId)) revert MissingScope(scope, groupId);
    }

    function _requireGroupScope(UsageKey storage k, uint8 scope, uint256 groupId) private view {
        if (!_keyHas(k, scope, groupId)) revert MissingScope(scope, groupId);
    }

    function _requireActionScope(Account storage a, uint256 accountHash, uint256 callerKeyHash) private view {
        (bool isOwner, UsageKey storage k) = _caller(a, accountHash, callerKeyHash);
        if (isOwner) return;
        if (k.groupScopes[SCOPE_MANAGE_ACTIONS].length == 0) revert MissingScope(SCOPE_MANAGE_ACTIONS, 0);
    }

    function _expired(UsageKey storage k) private view returns (bool) {
        return k.expiration != 0 && block.timestamp >= k.expiration;
    }

    /// Scope test without liveness (callers check liveness first). groupId is ignored for
    /// account-wide scopes.
    function _keyHas(UsageKey storage k, uint8 scope, uint256 groupId) private view returns (bool) {
        if (scope == SCOPE_CREATE_GROUPS) return k.canCreateGroups;
        if (scope == SCOPE_DELETE_GROUPS) return k.canDeleteGroups;
        if (scope == SCOPE_CREATE_PKPS) return k.canCreatePkps;
        if (scope > SCOPE_EXECUTE) return false;
        uint256[] storage ids = k.groupScopes[scope];
        for (uint256 i = 0; i < ids.length; i++) {
            if (ids[i] == 0 || ids[i] == groupId) return true;
        }
        return false;
    }

    function _checkText(string calldata name, string calldata description) private pure {
        if (bytes(name).length > MAX_NAME_BYTES) revert NameTooLong();
        if (bytes(description).length > MAX_DESCRIPTION_BYTES) revert DescriptionTooLong();
    }

    /// Replaces dst by src; true when that changed it.
    function _setIds(uint256[] storage dst, uint256[] calldata src) private returns (bool changed) {
        if (src.length > MAX_ITEMS_PER_CALL) revert TooMany();
        changed = dst.length != src.length;
        for (uint256 i = 0; !changed && i < src.length; i++) changed = dst[i] != src[i];
        if (!changed) return false;
        while (dst.length > 0) dst.pop();
        for (uint256 i = 0; i < src.length; i++) dst.push(src[i]);
    }

    function _sameText(string storage stored, string calldata given) private pure returns (bool) {
        return keccak256(bytes(stored)) == keccak256(bytes(given));
    }

    // =====================================================================================
    // Views
    // =====================================================================================

    function getApiPayers() external view returns (address[] memory) {
        return s_apiPayers;
    }

    /// The deployed implementation's view names, which its SDK's ChainSecured login reads: the API payers,
    /// and whether a key's account exists and msg.sender may write to it (its admin wallet, or an API
    /// payer while the account is managed). A usage key must be live; no name here is overloaded.
    function api_payers() external view returns (address[] memory) {
        return s_apiPayers;
    }

    function accountExistsAndIsMutable(uint256 keyHash) external view returns (bool) {
        (uint256 accountHash, bool isOwner, bool valid) = resolveKey(keyHash);
        Account storage a = s_accounts[accountHash];
        if (accountHash == 0 || !a.exists || (!isOwner && !valid)) return false;
        return msg.sender == a.admin || (s_apiPayerPos[msg.sender] != 0 && a.managed);
    }

    function isApiPayer(address wallet) external view returns (bool) {
        return s_apiPayerPos[wallet] != 0;
    }

    function accountExists(uint256 apiKeyHash) external view returns (bool) {
        return s_accounts[apiKeyHash].exists;
    }

    function getAccount(uint256 accountHash)
        external
        view
        returns (address adminWalletAddress, bool managed, bool exists)
    {
        Account storage a = s_accounts[accountHash];
        return (a.admin, a.managed, a.exists);
    }

    /// Which account a key belongs to, whether it is the owner's key, and whether it is live now
    /// (usage key: exists and not expired; account key: the account is managed).
    function resolveKey(uint256 keyHash) public view returns (uint256 accountHash, bool isOwner, bool valid) {
        accountHash = keyAccount[keyHash];
        if (accountHash == 0) return (0, false, false);
        Account storage a = s_accounts[accountHash];
        // A ChainSecured account has no account-level API key: its hash (for a wallet-created account,
        // keccak256 of the public address) must never work as a credential, nor a converted
        // account's old master key.
        // Nor, after an accepted ownership transfer, the key of the previous owner.
        if (keyHash == accountHash) return (accountHash, true, a.exists && a.managed && a.admin == a.keyWallet);
        UsageKey storage k = a.keys[keyHash];
        return (accountHash, false, k.exists && !_expired(k));
    }

    /// Whether a live key holds a scope (for per-group scopes: on groupId). The owner key holds all.
    function keyHasScope(uint256 keyHash, uint8 scope, uint256 groupId) external view returns (bool) {
        (uint256 accountHash, bool isOwner, bool valid) = resolveKey(keyHash);
        if (!valid) return false;
        if (isOwner) return scope <= SCOPE_CREATE_PKPS;
        return _keyHas(s_accounts[accountHash].keys[keyHash], scope, groupId);
    }

    /// True iff the key is live, the PKP is registered to the key's account, and some group on which
    /// the key may execute lists both cidHash and pkp (the owner key may execute on every group).
    function canExecute(uint256 keyHash, bytes32 cidHash, address pkp) external view returns (bool) {
        (uint256 accountHash, bool isOwner, bool valid) = resolveKey(keyHash);
        if (!valid) return false;
        if (s_wallets[pkp].accountHash != accountHash) return false;
        return _executableGroupLists(accountHash, isOwner, keyHash, cidHash, pkp, false);
    }

    /// A run without a PKP: true when some group the key may execute on lists the action. Such a
    /// run can still use a PKP only where canExecute allows that PKP with this action.
    function canExecuteAction(uint256 keyHash, bytes32 cidHash) external view returns (bool) {
        (uint256 accountHash, bool isOwner, bool valid) = resolveKey(keyHash);
        if (!valid) return false;
        return _executableGroupLists(accountHash, isOwner, keyHash, cidHash, address(0), true);
    }

    function _executableGroupLists(
        uint256 accountHash,
        bool isOwner,
        uint256 keyHash,
        bytes32 cidHash,
        address pkp,
        bool anyPkp
    ) private view returns (bool) {
        Account storage a = s_accounts[accountHash];
        bool all = isOwner;
        uint256[] storage ids = a.keys[keyHash].groupScopes[SCOPE_EXECUTE];
        if (!all) {
            for (uint256 i = 0; i < ids.length; i++) {
                if (ids[i] == 0) {
                    all = true;
                    break;
                }
            }
        }
        if (all) {
            // Only the groups listing the CID, never the whole account (see the header: Scale).
            uint256 id = a.cidHead[cidHash];
            if (anyPkp) return id != 0;
            while (id != 0) {
                Group storage g = a.groups[id];
                if (g.pkpPos[pkp] != 0) return true;
                id = _field(g.cidPos[cidHash], CID_NEXT);
            }
            return false;
        }
        for (uint256 i = 0; i < ids.length; i++) {
            Group storage g = a.groups[ids[i]];
            if (g.exists && g.cidPos[cidHash] != 0 && (anyPkp || g.pkpPos[pkp] != 0)) return true;
        }
        return false;
    }

    function getUsageKey(uint256 accountHash, uint256 keyHash) public view returns (UsageKeyView memory v) {
        UsageKey storage k = s_accounts[accountHash].keys[keyHash];
        if (!k.exists) revert UnknownKey();
        v.keyHash = keyHash;
        v.expiration = k.expiration;
        v.balance = k.balance;
        v.name = k.name;
        v.description = k.description;
        v.canCreateGroups = k.canCreateGroups;
        v.canDeleteGroups = k.canDeleteGroups;
        v.canCreatePkps = k.canCreatePkps;
        v.manageIpfsIdsInGroups = k.groupScopes[SCOPE_MANAGE_ACTIONS];
        v.addPkpToGroups = k.groupScopes[SCOPE_ADD_PKP];
        v.removePkpFromGroups = k.groupScopes[SCOPE_REMOVE_PKP];
        v.executeInGroups = k.groupScopes[SCOPE_EXECUTE];
    }

    function getGroup(uint256 accountHash, uint256 groupId) public view returns (GroupView memory v) {
        Group storage g = _group(s_accounts[accountHash], groupId);
        return GroupView(groupId, g.name, g.description, g.pkps, g.cids);
    }

    function getWallet(address wallet) public view returns (uint256 accountHash, WalletView memory v) {
        Wallet storage w = s_wallets[wallet];
        return (w.accountHash, WalletView(wallet, w.derivationPath, w.name, w.description));
    }

    function getAction(uint256 accountHash, bytes32 cidHash) public view returns (ActionView memory) {
        ActionMeta storage m = s_accounts[accountHash].actions[cidHash];
        return ActionView(cidHash, m.name, m.description);
    }

    function usageKeyCount(uint256 accountHash) external view returns (uint256) {
        return s_accounts[accountHash].keyList.length;
    }

    function groupCount(uint256 accountHash) external view returns (uint256) {
        return s_accounts[accountHash].groupList.length;
    }

    function walletCount(uint256 accountHash) external view returns (uint256) {
        return s_accounts[accountHash].walletList.length;
    }

    function actionCount(uint256 accountHash) external view returns (uint256) {
        return s_accounts[accountHash].actionList.length;
    }

    function groupWalletCount(uint256 accountHash, uint256 groupId) external view returns (uint256) {
        return _group(s_accounts[accountHash], groupId).pkps.length;
    }

    function groupActionCount(uint256 accountHash, uint256 groupId) external view returns (uint256) {
        return _group(s_accounts[accountHash], groupId).cids.length;
    }

    /// Paged views (see the header: Scale): (page, total) with page = items [offset, offset +
    /// page.length) in list order, at most min(size, MAX_PAGE_SIZE) items and PAGE_WORD_BUDGET storage
    /// words of them, at least one item when offset < total; total = the list's length; an offset past
    /// the end gives an empty page. Removal swaps the last item into the hole.
    function listUsageKeys(uint256 accountHash, uint256 offset, uint256 size)
        external
        view
        returns (UsageKeyView[] memory page, uint256 total)
    {
        Account storage a = s_accounts[accountHash];
        uint256[] storage list = a.keyList;
        total = list.length;
        (uint256 start, uint256 n) = _window(total, offset, size);
        uint256 words;
        uint256 fit;
        for (; fit < n; fit++) {
            UsageKey storage k = a.keys[list[start + fit]];
            words += 12 + _textWords(k.name) + _textWords(k.description);
            for (uint256 s = 0; s <= SCOPE_EXECUTE; s++) words += k.groupScopes[s].length;
            if (fit > 0 && words > PAGE_WORD_BUDGET) break;
        }
        page = new UsageKeyView[](fit);
        for (uint256 i = 0; i < fit; i++) page[i] = getUsageKey(accountHash, list[start + i]);
    }

    function listGroups(uint256 accountHash, uint256 offset, uint256 size)
        external
        view
        returns (GroupView[] memory page, uint256 total)
    {
        Account storage a = s_accounts[accountHash];
        uint256[] storage list = a.groupList;
        total = list.length;
        (uint256 start, uint256 n) = _window(total, offset, size);
        uint256 words;
        uint256 fit;
        for (; fit < n; fit++) {
            Group storage g = a.groups[list[start + fit]];
            words += 5 + _textWords(g.name) + _textWords(g.description) + g.pkps.length + g.cids.length;
            if (fit > 0 && words > PAGE_WORD_BUDGET) break;
        }
        page = new GroupView[](fit);
        for (uint256 i = 0; i < fit; i++) page[i] = getGroup(accountHash, list[start + i]);
    }

    function listWallets(uint256 accountHash, uint256 offset, uint256 size)
        external
        view
        returns (WalletView[] memory page, uint256 total)
    {
        return _walletPage(s_accounts[accountHash].walletList, offset, size);
    }

    function listWalletsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 size)
        external
        view
        returns (WalletView[] memory page, uint256 total)
    {
        return _walletPage(_group(s_accounts[accountHash], groupId).pkps, offset, size);
    }

    function listActions(uint256 accountHash, uint256 offset, uint256 size)
        external
        view
        returns (ActionView[] memory page, uint256 total)
    {
        return _actionPage(accountHash, s_accounts[accountHash].actionList, offset, size);
    }

    /// Actions in a group; name and description come from the standalone metadata when registered.
    function listActionsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 size)
        external
        view
        returns (ActionView[] memory page, uint256 total)
    {
        return _actionPage(accountHash, _group(s_accounts[accountHash], groupId).cids, offset, size);
    }

    function _walletPage(address[] storage list, uint256 offset, uint256 size)
        private
        view
        returns (WalletView[] memory page, uint256 total)
    {
        total = list.length;
        (uint256 start, uint256 n) = _window(total, offset, size);
        uint256 words;
        uint256 fit;
        for (; fit < n; fit++) {
            Wallet storage w = s_wallets[list[start + fit]];
            words += 5 + _textWords(w.name) + _textWords(w.description);
            if (fit > 0 && words > PAGE_WORD_BUDGET) break;
        }
        page = new WalletView[](fit);
        for (uint256 i = 0; i < fit; i++) (, page[i]) = getWallet(list[start + i]);
    }

    function _actionPage(uint256 accountHash, bytes32[] storage list, uint256 offset, uint256 size)
        private
        view
        returns (ActionView[] memory page, uint256 total)
    {
        total = list.length;
        (uint256 start, uint256 n) = _window(total, offset, size);
        mapping(bytes32 => ActionMeta) storage actions = s_accounts[accountHash].actions;
        uint256 words;
        uint256 fit;
        for (; fit < n; fit++) {
            ActionMeta storage m = actions[list[start + fit]];
            words += 3 + _textWords(m.name) + _textWords(m.description);
            if (fit > 0 && words > PAGE_WORD_BUDGET) break;
        }
        page = new ActionView[](fit);
        for (uint256 i = 0; i < fit; i++) page[i] = getAction(accountHash, list[start + i]);
    }

    /// Storage words a string occupies: its length word (which holds a short string itself) plus the
    /// data words of a long one.
    function _textWords(string storage text) private view returns (uint256) {
        uint256 n = bytes(text).length;
        return n < 32 ? 1 : 1 + (n + 31) / 32;
    }

    function _window(uint256 length, uint256 offset, uint256 size) private pure returns (uint256 start, uint256 n) {
        if (size > MAX_PAGE_SIZE) size = MAX_PAGE_SIZE;
        if (offset >= length) return (length, 0);
        start = offset;
        n = length - offset < size ? length - offset : size;
    }

    // =====================================================================================
    // O(1) sets: array + (value -> index + 1); removal swaps the last item into the hole.
    // =====================================================================================

    function _pushUint(uint256[] storage list, mapping(uint256 => uint256) storage pos, uint256 v) private {
        list.push(v);
        pos[v] = list.length;
    }

    function _removeUint(uint256[] storage list, mapping(uint256 => uint256) storage pos, uint256 v) private {
        uint256 i = pos[v] - 1;
        uint256 last = list[list.length - 1];
        list[i] = last;
        pos[last] = i + 1;
        list.pop();
        delete pos[v];
    }

    function _pushAddress(address[] storage list, mapping(address => uint256) storage pos, address v) private {
        list.push(v);
        pos[v] = list.length;
    }

    function _removeAddress(address[] storage list, mapping(address => uint256) storage pos, address v) private {
        uint256 i = pos[v] - 1;
        address last = list[list.length - 1];
        list[i] = last;
        pos[last] = i + 1;
        list.pop();
        delete pos[v];
    }

    function _pushBytes32(bytes32[] storage list, mapping(bytes32 => uint256) storage pos, bytes32 v) private {
        list.push(v);
        pos[v] = list.length;
    }

    function _removeBytes32(bytes32[] storage list, mapping(bytes32 => uint256) storage pos, bytes32 v) private {
        uint256 i = pos[v] - 1;
        bytes32 last = list[list.length - 1];
        list[i] = last;
        pos[last] = i + 1;
        list.pop();
        delete pos[v];
    }
}
