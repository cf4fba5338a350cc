// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @title TestStablecoin: "Sigil Test USD" (tUSD), a 6-decimal ERC-20 for the development chain only.
///
/// !!! DEVELOPMENT CHAIN ONLY. NEVER DEPLOY THIS ANYWHERE REAL. !!!
/// mint(to, amount) is open to ANYONE, with no limit: it is the dev chain's faucet, so the token is
/// worth nothing and anyone can create any amount of it. scripts/devchain.mjs deploys it on anvil for
/// the `chain` billing processor (DESIGN section 9); a real deployment points the Payments contract at
/// a real stablecoin instead.
///
/// Plain ERC-20 (EIP-20): transfer, transferFrom and approve return true or revert (never return
/// false); an allowance of type(uint256).max is not consumed by transferFrom. Transfers to the zero
/// address and approvals of the zero address revert.
contract TestStablecoin {
    error InsufficientBalance(address from, uint256 balance, uint256 needed);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    error ZeroAddress();

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    string public constant name = "Sigil Test USD";
    string public constant symbol = "tUSD";
    uint8 public constant decimals = 6;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    /// @notice The faucet: creates `amount` new tokens for `to`. Open to anyone (dev chain only).
    /// @param to Receiver of the new tokens (not the zero address).
    /// @param amount Smallest units (6 decimals: 1 tUSD = 1_000_000).
    function mint(address to, uint256 amount) external {
        if (to == address(0)) revert ZeroAddress();
        totalSupply += amount;
        unchecked {
            // Cannot overflow: no balance exceeds totalSupply, which was checked above.
            balanceOf[to] += amount;
        }
        emit Transfer(address(0), to, amount);
    }

    /// @notice Moves `amount` of the caller's tokens to `to`.
    /// @return Always true (failures revert).
    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    /// @notice Lets `spender` move up to `amount` of the caller's tokens (replaces any earlier allowance).
    /// @return Always true (failures revert).
    function approve(address spender, uint256 amount) external returns (bool) {
        if (spender == address(0)) revert ZeroAddress();
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    /// @notice Moves `amount` of `from`'s tokens to `to`, spending the caller's allowance from `from`
    /// (an allowance of type(uint256).max is unlimited and not decreased).
    /// @return Always true (failures revert).
    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(msg.sender, allowed, amount);
            unchecked {
                allowance[from][msg.sender] = allowed - amount;
            }
        }
        _transfer(from, to, amount);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) private {
        if (to == address(0)) revert ZeroAddress();
        uint256 balance = balanceOf[from];
        if (balance < amount) revert InsufficientBalance(from, balance, amount);
        unchecked {
            balanceOf[from] = balance - amount;
            // Cannot overflow: the sum of all balances is totalSupply.
            balanceOf[to] += amount;
        }
        emit Transfer(from, to, amount);
    }
}
