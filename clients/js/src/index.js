// @sigil/sdk: the JavaScript SDK of Sigil (README.md).
export { SigilClient, Mode, apiKeyHash, hashCid } from './client.js';
export * from './errors.js';
export {
  DOMAIN_NAME, DOMAIN_VERSION, DOMAIN_TYPES, MESSAGE_TYPES, MAX_TYPED_DATA_BYTES, ISSUED_AT_WINDOW_SECONDS, PrimaryType,
  buildTypedData, typedDataDigest, signTypedData, walletAuthHeader, parseWalletAuthHeader, signWalletAuth,
} from './typed_data.js';
export {
  AccountConfig, ChainSecuredAccount, ACCOUNT_CONFIG_ABI, chainSecuredAccountHash, contractError, masterKeyWallet,
} from './account_config.js';
export { RECEIPT_DOMAIN_NAME, RECEIPT_DOMAIN_VERSION, RECEIPT_TYPES, checkReceipt, paramsHash, responseHash } from './receipt.js';
