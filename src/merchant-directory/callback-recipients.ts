import { Pool } from 'pg';
import { AppSecretCipher } from './app-secret.cipher';

/** What a callback needs of its merchant, current at each attempt: where to send it and what to sign it with. */
export interface CallbackRecipient {
  apiKey: string;
  callbackUrl: string | null;
  /** Opened only when a callback is signed: a merchant without a callback_url never needs it. */
  appSecret(): string;
}

/** The merchants that callbacks go to, read from provisioning. */
export class CallbackRecipients {
  /**
   * Secrets already opened, by their sealed form: opening one (AES-GCM) took
   * about 1 % of the service's main thread end to end, once per callback. A
   * new secret is sealed with a new random IV, so a rotated secret is a new
   * entry and an old one is never served for it.
   */
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    private readonly cipher: AppSecretCipher,
    private readonly maxOpened = 10_000,
  ) {}

  /** One statement for many merchants (callbacks sent together read theirs at once); undefined for an unknown id. */
  async byIds(merchantIds: readonly string[]): Promise<(CallbackRecipient | undefined)[]> {
    const { rows } = await this.pool.query<{ merchant_id: string; api_key: string; app_secret_enc: Buffer; callback_url: string | null }>({
      name: 'callback-recipients',
      text: 'select merchant_id, api_key, app_secret_enc, callback_url from merchants where merchant_id = any($1)',
      values: [[...new Set(merchantIds)]],
    });
    const byId = new Map(rows.map((row): [string, CallbackRecipient] => [row.merchant_id, this.fromRow(row)]));
    return merchantIds.map((id) => byId.get(id));
  }

  /** A recipient from a merchants row read by another statement (a callback claim reads its merchants with it). */
  fromRow(row: { api_key: string; app_secret_enc: Buffer; callback_url: string | null }): CallbackRecipient {
    return { apiKey: row.api_key, callbackUrl: row.callback_url, appSecret: () => this.open(row.app_secret_enc) };
  }

  private open(sealed: Buffer): string {
    const key = sealed.toString('base64');
    const known = this.opened.get(key);
    if (known !== undefined) return known;
    const secret = this.cipher.decrypt(sealed);
    if (this.opened.size >= this.maxOpened) this.opened.clear();
    this.opened.set(key, secret);
    return secret;
  }
}
