import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { untilDatabaseAnswers } from '../../infrastructure/postgres/database-wait';
import { StatementBatcher } from '../../infrastructure/postgres/statement-batcher';

const MAX_TOKEN = (1n << 63n) - 1n;

interface Admission {
  /** {m: merchant id, n: nonce or null, e: nonce expiry, w: rate window (Unix second), t: this admission's token} as merchant_admit takes it. */
  json: string;
}

export interface AdmissionResult {
  nonceFresh: boolean;
  /** Requests of this merchant in the current one-second window, this one included. */
  hitsThisSecond: number;
  /** The merchant row's version as this request was admitted (see MerchantDirectory). */
  merchantVersion: string | null;
  /** The catalogue's revision as this request was admitted (see CatalogueReader). */
  catalogueRevision: string;
}

/**
 * Nonces and rate windows in Postgres, shared by every instance. Concurrent
 * requests are admitted together, in one statement and one commit. The nonce
 * is committed durably (synchronous commit) before the request goes on, so
 * not even a crash of the database server lets a captured request be
 * accepted twice. An admission whose connection drops (a failover) is sent
 * again for up to `waitMs`: its token tells its own nonce from a replay's.
 */
export class ReplayGuard {
  private readonly admissions: StatementBatcher<Admission, AdmissionResult>;
  /** Admission tokens: a random start per process, then counted (bigint's positive range). */
  private nextToken = randomBytes(8).readBigUInt64BE() >> 1n;

  constructor(
    private readonly pool: Pool,
    private readonly waitMs = 0,
  ) {
    this.admissions = new StatementBatcher((batch) => this.admitAll(batch), { maxBatch: 200, maxInFlight: 2 });
  }

  /**
   * Consumes the nonce and counts the request in the merchant's rate window,
   * and reads the merchant's version and the catalogue's revision, in one
   * statement. Without a nonce (verify-signature) it only counts.
   */
  admit(merchantId: string, nonce: { value: string; timestampSeconds: number } | undefined, nowMs: number): Promise<AdmissionResult> {
    // Remembered until the timestamp can no longer pass the 300 s window, plus a margin.
    const expiresAt = nonce && new Date((nonce.timestampSeconds + 301) * 1000).toISOString();
    const token = nonce ? String(this.takeToken()) : null;
    const json = JSON.stringify({ m: merchantId, n: nonce?.value ?? null, e: expiresAt ?? null, w: Math.floor(nowMs / 1000), t: token });
    return untilDatabaseAnswers(() => this.admissions.run({ json }), { waitMs: this.waitMs });
  }

  private takeToken(): bigint {
    const token = this.nextToken;
    this.nextToken = token === MAX_TOKEN ? 1n : token + 1n;
    return token;
  }

  private async admitAll(batch: readonly Admission[]): Promise<AdmissionResult[]> {
    // The catalogue revision as a scalar subquery, read once per statement (a join with the
    // one-row table, which has no statistics, was costed past jit_above_cost: 200 ms of JIT).
    const { rows } = await this.pool.query<{ o_item: number; o_fresh: boolean; o_hits: number; o_version: string | null; o_catalogue: string }>({
      name: 'merchant-admit',
      text: `select o_item, o_fresh, o_hits, o_version, (select revision::text from catalogue_revision) as o_catalogue
       from merchant_admit($1::jsonb)`,
      values: [`[${batch.map((a) => a.json).join(',')}]`],
    });
    const results: AdmissionResult[] = new Array(batch.length);
    for (const row of rows) {
      results[row.o_item] = { nonceFresh: row.o_fresh, hitsThisSecond: row.o_hits, merchantVersion: row.o_version, catalogueRevision: row.o_catalogue };
    }
    return results;
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
