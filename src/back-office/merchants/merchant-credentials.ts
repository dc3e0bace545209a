import { randomBytes } from 'node:crypto';

export interface MerchantCredentials {
  merchantId: string;
  apiKey: string;
  appSecret: string;
}

export function newMerchantCredentials(): MerchantCredentials {
  return {
    merchantId: `mch_${randomBytes(8).toString('hex')}`,
    apiKey: `ak_${randomBytes(16).toString('hex')}`,
    appSecret: randomBytes(32).toString('hex'),
  };
}
