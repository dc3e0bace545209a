import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';

export interface MerchantCredentials {
  merchantId: string;
  currency: string;
  appSecret: string;
  status: 'active' | 'suspended';
  ipWhitelist: readonly string[];
  rateLimitPerSecond: number;
}

interface MerchantRow {
  merchant_id: string;
  currency: string;
  app_secret_enc: Buffer;
  status: 'active' | 'suspended';
  ip_whitelist: string[];
  rate_limit_per_second: number;
}

/**
 * Looks merchants up by API key for request authentication. Entries are
 * cached briefly: a suspension, a new whitelist or a new rate limit takes
 * effect on every instance within `ttlMs`.
 */
export class MerchantDirectory {
  private readonly cache = new Map<string, { at: number; merchant: MerchantCredentials | undefined }>();

  constructor(
    private readonly pool: Pool,
    private readonly cipher: AppSecretCipher,
    private readonly ttlMs = 1000,
  ) {}

  async byApiKey(apiKey: string): Promise<MerchantCredentials | undefined> {
    const cached = this.cache.get(apiKey);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.merchant;
    const { rows } = await this.pool.query<MerchantRow>(
      `select merchant_id, currency, app_secret_enc, status, ip_whitelist, rate_limit_per_second from merchants where api_key = $1`,
      [apiKey],
    );
    const row = rows[0];
    const merchant = row && {
      merchantId: row.merchant_id,
      currency: row.currency,
      // Names SECRETS_KEY and the merchant when no key opens it, rather than a bare "unable to authenticate data".
      appSecret: this.cipher.decrypt(row.app_secret_enc, `the app secret of merchant ${row.merchant_id}`),
      status: row.status,
      ipWhitelist: row.ip_whitelist,
      rateLimitPerSecond: row.rate_limit_per_second,
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(apiKey, { at: Date.now(), merchant });
    return merchant;
  }

  /** Forgets cached entries on this instance, e.g. right after an admin change. */
  invalidate(): void {
    this.cache.clear();
  }
}
