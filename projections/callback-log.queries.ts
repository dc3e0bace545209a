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
  /** When the next attempt is due; null once acknowledged. */
  due_at: Date | null;
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
 * none scheduled). An acknowledged delivery has left callback_deliveries
 * (recordAttemptResults): its acknowledged attempt tells it. One snapshot
 * for both reads: read apart, an attempt started between them looked like
 * one whose sender had died, and a delivery acknowledged between them like
 * none at all.
 */
export async function deliveryLogOf(pool: Pool, orderNo: string): Promise<{ delivery: DeliveryRow | undefined; attempts: AttemptRow[] }> {
  const { rows, attempts } = await inOneSnapshot(pool, async (client) => ({
    rows: (
      await client.query<DeliveryRow>(
        'select state, attempts_made, due_at, coalesce(lease_until > now(), false) as leased from callback_deliveries where order_no = $1',
        [orderNo],
      )
    ).rows,
    attempts: (await client.query<AttemptRow>('select * from callback_attempts where order_no = $1 order by attempt', [orderNo])).rows,
  }));
  const last = attempts.at(-1);
  const delivered: DeliveryRow | undefined = last?.acknowledged
    ? { state: 'acknowledged', attempts_made: last.attempt, due_at: null, leased: false }
    : undefined;
  return { delivery: rows[0] ?? delivered, attempts };
}

/**
 * One more attempt, now. A delivery still on its schedule is only brought
 * forward; a finished one gets one extra attempt: an exhausted one from its
 * row, an acknowledged one (no row left) put back on the schedule after its
 * last attempt. False when the order has no delivery.
 */
export async function requestRedelivery(pool: Pool, orderNo: string): Promise<boolean> {
  const statement = `with reopened as (
       update callback_deliveries set manual_requested = true, due_at = now(),
           max_attempts = case when state = 'pending' then max_attempts else attempts_made + 1 end,
           state = 'pending'
         where order_no = $1
         returning order_no),
     -- created_at is when the order ended; its first attempt's start is the nearest the attempts tell.
     delivered as (
       insert into callback_deliveries (order_no, attempts_made, max_attempts, manual_requested, due_at, created_at)
       select order_no, max(attempt), max(attempt) + 1, true, now(), min(started_at) from callback_attempts
       where order_no = $1 and not exists (select from reopened)
       group by order_no having bool_or(acknowledged)
       -- Another request put it back meanwhile: this one only brings it forward.
       on conflict (order_no) do update set manual_requested = true, due_at = now()
       returning order_no)
     select order_no from reopened union all select order_no from delivered`;
  // A delivery acknowledged while this statement waited for its row lock is
  // gone when the lock is granted, and its acknowledgement is not in the
  // statement's snapshot: the second statement sees it.
  for (let tries = 0; tries < 2; tries++) {
    const { rowCount } = await pool.query(statement, [orderNo]);
    if ((rowCount ?? 0) > 0) return true;
  }
  return false;
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
