// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @title Payments: buying Sigil credits with an ERC-20 stablecoin (the `chain` billing processor,
/// DESIGN section 9).
///
/// The client first approves this contract on the token, then calls pay(ref, amount) with the
/// reference and amount that create_payment_intent returned. The tokens go straight from the payer to
/// the treasury (nothing is ever held here, so there is nothing to withdraw), and Paid records the
/// payment. confirm_payment looks for a Paid event with the intent's reference and amount.
///
/// The contract does not refuse a reference it has seen before: two payments with the same reference
/// both go through and both emit Paid. Crediting each intent exactly once is the billing ledger's job.
///
/// Token and treasury are fixed at deployment; there is no owner and nothing to administer.
contract Payments {
    error ZeroAddress();
    error ZeroAmount();
    error ZeroReference();
    error TransferFailed();

    /// A payment of `amount` token units from `payer` to the treasury for the payment intent `ref`.
    /// (`ref`, not `reference`: the latter is a reserved word in Solidity.)
    event Paid(bytes32 indexed ref, address indexed payer, uint256 amount);

    /// The ERC-20 stablecoin accepted (6 decimals).
    address public immutable token;
    /// Where every payment goes.
    address public immutable treasury;

    /// @param token_ The ERC-20 token accepted.
    /// @param treasury_ The address receiving every payment.
    constructor(address token_, address treasury_) {
        if (token_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        token = token_;
        treasury = treasury_;
    }

    /// @notice Pays `amount` token units from the caller to the treasury for the payment intent
    /// `ref`. The caller must have approved at least `amount` to this contract on the token.
    /// @param ref The payment intent's reference (not zero), as create_payment_intent gave it.
    /// @param amount Token units (not zero).
    function pay(bytes32 ref, uint256 amount) external {
        if (ref == bytes32(0)) revert ZeroReference();
        if (amount == 0) revert ZeroAmount();
        // A low-level call (no interface type, so compile.mjs writes no artifact for one). A token
        // that reverts passes its own error through; one that returns anything but true is refused.
        // Empty return data counts as success only from a contract (tokens such as USDT on Ethereum
        // return nothing); a call to an address without code "succeeds" with no data and is refused.
        (bool ok, bytes memory ret) =
            token.call(abi.encodeWithSignature("transferFrom(address,address,uint256)", msg.sender, treasury, amount));
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        if (ret.length == 0 ? token.code.length == 0 : (ret.length != 32 || abi.decode(ret, (uint256)) != 1)) {
            revert TransferFailed();
        }
        emit Paid(ref, msg.sender, amount);
    }
}
