import { Pool } from 'pg';
import { Migration } from '../../infrastructure/postgres/migrations';

export const merchantApiMigrations: readonly Migration[] = [
  {
    id: 'merchant-api/001-nonces-and-rate-windows',
    sql: `
      create table merchant_nonces (
        merchant_id text        not null,
        nonce       text        not null,
        expires_at  timestamptz not null,
        primary key (merchant_id, nonce)
      );
      create index on merchant_nonces (expires_at);
      -- One row per merchant: the current one-second window and its count.
      create table merchant_rate_windows (
        merchant_id  text   primary key,
        window_start bigint not null,
        hits         int    not null
      );`,
  },
];

/** The merchant's version, read in the same statement as the admission ($1 is the merchant id). */
const MERCHANT_VERSION = '(select updated_at::text from merchants where merchant_id = $1)';

export interface AdmissionResult {
  nonceFresh: boolean;
  /** Requests of this merchant in the current one-second window, this one included. */
  hitsThisSecond: number;
  /** The merchant row's version as this request was admitted (see MerchantDirectory). */
  merchantVersion: string | null;
}

/**
 * Nonces and rate windows in Postgres, shared by every instance, in one round
 * trip per request. The nonce is committed durably (synchronous commit)
 * before the request goes on, so not even a crash of the database server
 * lets a captured request be accepted twice.
 */
export class ReplayGuard {
  constructor(private readonly pool: Pool) {}

  /**
   * Consumes the nonce and counts the request in the merchant's rate window,
   * in one round trip. Without a nonce (verify-signature) it only counts.
   */
  async admit(merchantId: string, nonce: { value: string; timestampSeconds: number } | undefined, nowMs: number): Promise<AdmissionResult> {
    // Remembered until the timestamp can no longer pass the 300 s window, plus a margin.
    const expiresAt = nonce && new Date((nonce.timestampSeconds + 301) * 1000);
    const { rows } = await this.pool.query<{ fresh: boolean; hits: number; version: string | null }>(
      `with nonce as (
         insert into merchant_nonces (merchant_id, nonce, expires_at) select $1, $2, $3 where $2::text is not null
         on conflict do nothing returning 1
       ), rate as (
         insert into merchant_rate_windows as w (merchant_id, window_start, hits) values ($1, $4, 1)
         on conflict (merchant_id) do update set
           hits = case when w.window_start = excluded.window_start then w.hits + 1 else 1 end,
           window_start = excluded.window_start
         returning hits
       )
       select $2::text is null or exists (select 1 from nonce) as fresh, (select hits from rate) as hits, ${MERCHANT_VERSION} as version`,
      [merchantId, nonce?.value ?? null, expiresAt ?? null, Math.floor(nowMs / 1000)],
    );
    return { nonceFresh: rows[0].fresh, hitsThisSecond: rows[0].hits, merchantVersion: rows[0].version };
  }

  /**
   * Gives a nonce back after a 500, so that the same request may be retried
   * unchanged. The 500 may itself come from a lost database connection: then
   * the delete goes on in the background until it succeeds or the nonce would
   * have expired anyway. Resolves after the first try.
   */
  async forget(merchantId: string, nonce: string, timestampSeconds: number, onGiveUp: (error: unknown) => void): Promise<void> {
    const giveUpAt = (timestampSeconds + 301) * 1000;
    const attempt = () => this.pool.query('delete from merchant_nonces where merchant_id = $1 and nonce = $2', [merchantId, nonce]);
    try {
      await attempt();
    } catch (first) {
      void (async () => {
        for (let delay = 100, error = first; ; delay = Math.min(delay * 2, 2000)) {
          if (Date.now() + delay > giveUpAt) return onGiveUp(error);
          await new Promise((r) => setTimeout(r, delay).unref());
          try {
            return void (await attempt());
          } catch (next) {
            error = next;
          }
        }
      })();
    }
  }

  async purgeExpired(): Promise<number> {
    const result = await this.pool.query('delete from merchant_nonces where expires_at < now()');
    return result.rowCount ?? 0;
  }
}
