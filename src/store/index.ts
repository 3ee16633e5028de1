/** The store port: types and secret encryption. Adapters are imported from ./sqlite, ./mongo or ./open.js. */
export type * from './types.js';
export { EXECUTION_STATUSES, MAX_PAGE_SIZE } from './types.js';
export { decryptSecret, deriveSecretKey, encryptSecret } from './crypto.js';
export type { SecretKey } from './crypto.js';
