// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// A test USD stablecoin for `tollgate dev`: 6 decimals as USDC and USDT have, `amount` minted
/// to each holder at deployment. It exists on a local devnet only.
contract TestUSD is ERC20 {
    constructor(address[] memory holders, uint256 amount) ERC20("Test USD", "TUSD") {
        for (uint256 i = 0; i < holders.length; i++) _mint(holders[i], amount);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
