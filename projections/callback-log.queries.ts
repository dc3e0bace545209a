import { Pool } from 'pg';
import { inOneSnapshot } from '../src/infrastructure/postgres/transactions';

/**
 * What staff and operators read and do of the callback schedule
 * (callback_deliveries, callback_attempts and callback_attempt_minutes):
 * an order's delivery log and its manual redelivery, the backlog the status
 * page and the metrics report, and the results over time the operations
 * dashboard shows. The senders' claims and attempts are in
 * callback-schedule.queries.ts.
 */

// ---------------------------------------------------------------------------
// What staff see and do.

export interface DeliveryRow {
  state: string;
  attempts_made: number;
  due_at: Date;
  /** Whether a sender's lease on it is live. */
  leased: boolean;
}

export interface AttemptRow {
  attempt: number;
  kind: string;
  started_at: Date;
  url: string | null;
  status_code: number | null;
  latency_ms: number | null;
  reply_excerpt: string | null;
  acknowledged: boolean | null;
  error: string | null;
}

/**
 * An order's delivery and its attempts, first to last (delivery undefined:
 * none scheduled). One snapshot for both: read apart, an attempt started
 * between the two reads looked like one whose sender had died.
 */
export async function deliveryLogOf(pool: Pool, orderNo: string): Promise<{ delivery: DeliveryRow | undefined; attempts: AttemptRow[] }> {
  const { rows, attempts } = await inOneSnapshot(pool, async (client) => ({
    rows: (
      await client.query<DeliveryRow>(
        'select state, attempts_made, due_at, coalesce(lease_until > now(), false) as leased from callback_deliveries where order_no = $1',
        [orderNo],
      )
    ).rows,
    attempts: await client.query<AttemptRow>('select * from callback_attempts where order_no = $1 order by attempt', [orderNo]),
  }));
  return { delivery: rows[0], attempts: attempts.rows };
}

/**
 * One more attempt, now. A delivery still on its schedule is only brought
 * forward; a finished one (acknowledged or exhausted) gets one extra
 * attempt. False when the order has no delivery.
 */
export async function requestRedelivery(pool: Pool, orderNo: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `update callback_deliveries set manual_requested = true, due_at = now(),
         max_attempts = case when state = 'pending' then max_attempts else attempts_made + 1 end,
         state = 'pending'
       where order_no = $1`,
    [orderNo],
  );
  return (rowCount ?? 0) > 0;
}

// ---------------------------------------------------------------------------
// The backlog.

/** Deliveries due or retrying, exhausted ones, and the earliest due time of those pending. */
export async function callbackBacklog(pool: Pool): Promise<{ pending: number; exhausted: number; oldest: Date | null }> {
  const { rows } = await pool.query<{ pending: number; exhausted: number; oldest: Date | null }>(
    `select count(*) filter (where state = 'pending')::int as pending, count(*) filter (where state = 'exhausted')::int as exhausted,
                min(due_at) filter (where state = 'pending') as oldest
         from callback_deliveries`,
  );
  return rows[0];
}

/**
 * The pending deliveries and the age in seconds of the oldest (callbacks,
 * callbacks_age), as scalar subqueries: a metrics scrape selects them in one
 * statement with the other work queues'.
 */
export const CALLBACK_BACKLOG_COLUMNS = `(select count(*) from callback_deliveries where state = 'pending') as callbacks,
              (select extract(epoch from now() - min(created_at))::float8 from callback_deliveries where state = 'pending') as callbacks_age`;

export interface CallbackBacklogColumns {
  callbacks: string;
  callbacks_age: number | null;
}

/**
 * The deliveries that ran out of attempts (callbacks_exhausted), from their
 * partial index: a scalar subquery for the operations dashboard's statement
 * of the queues.
 */
export const CALLBACK_EXHAUSTED_COLUMN = `(select count(*) from callback_deliveries where state = 'exhausted') as callbacks_exhausted`;

export interface CallbackExhaustedColumn {
  callbacks_exhausted: string;
}

// ---------------------------------------------------------------------------
// The attempts' results over time.

/**
 * The results of the attempts started in [from, to), by slot of
 * `stepSeconds` aligned on the Unix epoch (slots without any left out): how
 * many the merchants acknowledged and how many they did not. An attempt
 * still in flight, or whose sender stopped before its result, is neither.
 * Read from the per-minute counts (callback_attempt_minutes) by their key:
 * a row per minute and sending instance, whatever the number of attempts.
 */
export async function callbackAttemptSlots(
  pool: Pool,
  from: Date,
  to: Date,
  stepSeconds: number,
): Promise<{ slot: Date; acknowledged: number; not_acknowledged: number }[]> {
  const { rows } = await pool.query<{ slot: Date; acknowledged: number; not_acknowledged: number }>(
    `select date_bin(make_interval(secs => $3), minute, timestamptz '1970-01-01 00:00:00+00') as slot,
            sum(acknowledged)::int as acknowledged, sum(not_acknowledged)::int as not_acknowledged
     from callback_attempt_minutes where minute >= $1 and minute < $2 group by 1 order by 1`,
    [from, to, stepSeconds],
  );
  return rows;
}
