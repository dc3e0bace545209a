/** Merchant API v2 client and signing helpers; see docs/merchant-client.md. */
export * from './merchant-client';
export * from './signing';
