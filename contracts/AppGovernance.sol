// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @title AppGovernance: which app_compose versions of Sigil may run (the spec's verification rule 8).
///
/// The app id of a Sigil deployment is this contract's address. A verifier reads the deployment's
/// compose_hash (SHA-256 of its app_compose, attested in RTMR3) and asks allowedComposeHashes(hash):
/// only a compose hash the owner has allowed counts as an approved release.
///
/// The owner is set at deployment to any address: an EOA in development, a multisig (a Safe) in
/// production, where CI proposes addComposeHash and the signers approve it. Nothing here requires an
/// EOA (no tx.origin, no signatures), so every call works from a contract account.
///
/// Ownership moves in two steps: transferOwnership(newOwner) by the owner proposes, acceptOwnership()
/// by the proposed address completes, so control never lands on an address that cannot act.
/// transferOwnership(address(0)) withdraws a proposal.
///
/// A write that would change nothing reverts with NothingToChange.
contract AppGovernance {
    error NotOwner();
    error NotPendingOwner();
    error ZeroAddress();
    error ZeroComposeHash();
    error NothingToChange();

    event ComposeHashAdded(bytes32 indexed composeHash);
    event ComposeHashRemoved(bytes32 indexed composeHash);
    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// True for every compose hash (SHA-256 of app_compose) the owner has allowed and not removed.
    mapping(bytes32 => bool) public allowedComposeHashes;

    address public owner;
    /// Proposed by transferOwnership, zero when none.
    address public pendingOwner;

    constructor(address initialOwner) {
        if (initialOwner == address(0)) revert ZeroAddress();
        owner = initialOwner;
        emit OwnershipTransferred(address(0), initialOwner);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    function addComposeHash(bytes32 composeHash) external onlyOwner {
        if (composeHash == bytes32(0)) revert ZeroComposeHash();
        if (allowedComposeHashes[composeHash]) revert NothingToChange();
        allowedComposeHashes[composeHash] = true;
        emit ComposeHashAdded(composeHash);
    }

    function removeComposeHash(bytes32 composeHash) external onlyOwner {
        if (!allowedComposeHashes[composeHash]) revert NothingToChange();
        allowedComposeHashes[composeHash] = false;
        emit ComposeHashRemoved(composeHash);
    }

    /// Step one, by the owner: proposes newOwner (address(0) withdraws a pending proposal).
    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == pendingOwner || newOwner == owner) revert NothingToChange();
        pendingOwner = newOwner;
        emit OwnershipTransferStarted(owner, newOwner);
    }

    /// Step two, by the proposed address itself (a multisig accepts with its own transaction).
    function acceptOwnership() external {
        if (pendingOwner == address(0) || msg.sender != pendingOwner) revert NotPendingOwner();
        address previous = owner;
        owner = msg.sender;
        pendingOwner = address(0);
        emit OwnershipTransferred(previous, msg.sender);
    }
}
