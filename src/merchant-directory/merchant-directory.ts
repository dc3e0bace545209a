import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';

export interface MerchantCredentials {
  merchantId: string;
  currency: string;
  appSecret: string;
  /** The secret a rotation replaced, still accepted until `validUntilMs` (it never signs callbacks). */
  previousAppSecret?: { secret: string; validUntilMs: number };
  status: 'active' | 'suspended';
  ipWhitelist: readonly string[];
  rateLimitPerSecond: number;
  /** The row's updated_at: any change to the merchant changes it. */
  version: string;
}

interface MerchantRow {
  merchant_id: string;
  currency: string;
  app_secret_enc: Buffer;
  previous_app_secret_enc: Buffer | null;
  previous_valid_until_ms: string | null;
  status: 'active' | 'suspended';
  ip_whitelist: string[];
  rate_limit_per_second: number;
  version: string;
}

/**
 * Looks merchants up by API key for request authentication. Entries are kept
 * in memory but never trusted alone: the gateway compares an entry's version
 * with the row's current one in the same statement that admits the request,
 * and reloads on any difference, so a change made through any instance
 * governs the very next request. Unknown keys are not remembered.
 */
export class MerchantDirectory {
  private readonly cache = new Map<string, MerchantCredentials>();

  constructor(
    private readonly pool: Pool,
    private readonly cipher: AppSecretCipher,
    private readonly maxEntries = 10_000,
  ) {}

  async byApiKey(apiKey: string): Promise<MerchantCredentials | undefined> {
    return this.cache.get(apiKey) ?? this.reload(apiKey);
  }

  /** Reads the merchant afresh and keeps it. */
  async reload(apiKey: string): Promise<MerchantCredentials | undefined> {
    const { rows } = await this.pool.query<MerchantRow>(
      `select merchant_id, currency, app_secret_enc, status, ip_whitelist, rate_limit_per_second, updated_at::text as version,
         previous_app_secret_enc, (extract(epoch from previous_app_secret_valid_until) * 1000)::bigint::text as previous_valid_until_ms
       from merchants where api_key = $1`,
      [apiKey],
    );
    const row = rows[0];
    if (!row) {
      this.cache.delete(apiKey);
      return undefined;
    }
    const merchant: MerchantCredentials = {
      merchantId: row.merchant_id,
      currency: row.currency,
      // Names SECRETS_KEY and the merchant when no key opens it, rather than a bare "unable to authenticate data".
      appSecret: this.cipher.decrypt(row.app_secret_enc, `the app secret of merchant ${row.merchant_id}`),
      previousAppSecret: this.previousSecretOf(row),
      status: row.status,
      ipWhitelist: row.ip_whitelist,
      rateLimitPerSecond: row.rate_limit_per_second,
      version: row.version,
    };
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(apiKey, merchant);
    return merchant;
  }

  /** An overlap that has ended is not even opened; one still running carries its end, checked at every request. */
  private previousSecretOf(row: MerchantRow): MerchantCredentials['previousAppSecret'] {
    const validUntilMs = Number(row.previous_valid_until_ms);
    if (!row.previous_app_secret_enc || !(validUntilMs > Date.now())) return undefined;
    const secret = this.cipher.decrypt(row.previous_app_secret_enc, `the previous app secret of merchant ${row.merchant_id}`);
    return { secret, validUntilMs };
  }
}
