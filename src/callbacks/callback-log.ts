import { Pool } from 'pg';
import { inOneSnapshot } from '../infrastructure/postgres/transactions';
import { isoTimestamp } from '../shared/clock';

/** What staff see of an order's callbacks, and the manual redelivery. */
export class CallbackLog {
  constructor(private readonly pool: Pool) {}

  async of(orderNo: string) {
    // One snapshot for the delivery and its attempts: read apart, an attempt
    // started between the two reads looked like one whose sender had died.
    const { rows, attempts } = await inOneSnapshot(this.pool, async (client) => ({
      rows: (
        await client.query<{ state: string; attempts_made: number; due_at: Date; leased: boolean }>(
          'select state, attempts_made, due_at, coalesce(lease_until > now(), false) as leased from callback_deliveries where order_no = $1',
          [orderNo],
        )
      ).rows,
      attempts: await client.query<{
        attempt: number;
        kind: string;
        started_at: Date;
        url: string | null;
        status_code: number | null;
        latency_ms: number | null;
        reply_excerpt: string | null;
        acknowledged: boolean | null;
        error: string | null;
      }>('select * from callback_attempts where order_no = $1 order by attempt', [orderNo]),
    }));
    if (!rows[0]) return undefined;
    return {
      order_no: orderNo,
      state: rows[0].state,
      attempts_made: rows[0].attempts_made,
      next_attempt_at: rows[0].state === 'pending' ? isoTimestamp(rows[0].due_at) : null,
      attempts: attempts.rows.map((a) => {
        // No result yet: still being sent (the latest attempt, under a live lease), or its sender died.
        const inProgress = a.acknowledged === null && a.attempt === rows[0].attempts_made && rows[0].leased;
        const lost = a.acknowledged === null && !inProgress;
        return {
          attempt: a.attempt,
          kind: a.kind,
          at: isoTimestamp(a.started_at),
          url: a.url,
          in_progress: inProgress,
          status_code: a.status_code,
          latency_ms: a.latency_ms,
          reply_excerpt: a.reply_excerpt,
          acknowledged: a.acknowledged ?? false,
          error: lost ? 'no result recorded: the sender stopped mid-attempt' : a.error,
        };
      }),
    };
  }

  /**
   * One more attempt, now. A delivery still on its schedule is only brought
   * forward; a finished one (acknowledged or exhausted) gets one extra attempt.
   */
  async redeliver(orderNo: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `update callback_deliveries set manual_requested = true, due_at = now(),
         max_attempts = case when state = 'pending' then max_attempts else attempts_made + 1 end,
         state = 'pending'
       where order_no = $1`,
      [orderNo],
    );
    return (rowCount ?? 0) > 0;
  }
}
