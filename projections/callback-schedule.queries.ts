import { Pool } from 'pg';

/**
 * The callback senders' writes of the callback schedule
 * (callback_deliveries, and callback_attempts beside it): their attempts'
 * starts and results, and hand-backs. Their claims are in
 * callback-claims.queries.ts; what staff and operators read of the schedule
 * is in callback-log.queries.ts.
 */

// ---------------------------------------------------------------------------
// Attempts a sender writes itself: those the claim did not start, and every result.

export interface AttemptStart {
  order_no: string;
  attempt: number;
  kind: 'manual' | 'scheduled';
  url: string | null;
  merchant_id: string;
  /** When the next attempt is due if this one never reports back. */
  delay_ms: number;
}

export interface AttemptResult {
  order_no: string;
  attempt: number;
  next: 'acknowledged' | 'exhausted' | 'pending';
  delay_ms: number;
  status_code: number | null;
  latency_ms: number;
  reply_excerpt: string;
  acknowledged: boolean;
  error: string | null;
}

/*
 * Each statement names its rows' keys twice: in the JSON it takes the values
 * from, and as an array (`order_no = any($3)`). jsonb_to_recordset tells the
 * planner nothing of its size (it assumes 100 rows), so without the array the
 * planner chose a sequential scan of both tables (one row per order ever
 * called back) for a batch of a few rows; the array lets it size the batch
 * and walk the primary keys.
 *
 * Neither is prepared: a prepared statement's generic plan is made once, at
 * its sixth call, and kept until the tables are next analyzed. Made while the
 * tables held a few dozen rows (a new database's first callbacks), it scanned
 * both, and went on scanning them as they grew: 12 ms a call after 7,000
 * orders against 1-2 planned each time. Planned at each call, the plan
 * follows the tables' size; one call carries a batch of attempts, so the
 * planning is a small part of it.
 */

/**
 * Writes attempts down before they are sent, in one statement: true for each
 * attempt this instance now holds. An attempt is taken only by the
 * delivery's current leaseholder, and only as the attempt that follows the
 * recorded count; the attempt row is inserted after the delivery moved, so a
 * sender whose lease expired meanwhile writes nothing that could stand in the
 * way of the instance that holds the delivery now.
 */
export async function startAttempts(pool: Pool, instanceId: string, starts: readonly AttemptStart[]): Promise<boolean[]> {
  const { rows } = await pool.query<{ order_no: string }>(
    `with started as (select * from jsonb_to_recordset($1::jsonb)
                        as s(order_no text, attempt int, kind text, url text, merchant_id text, delay_ms float8)),
     moved as (
       update callback_deliveries d set attempts_made = s.attempt, merchant_id = s.merchant_id, manual_requested = false,
         due_at = now() + make_interval(secs => s.delay_ms / 1000)
       from started s
       where d.order_no = any($3::text[]) and d.order_no = s.order_no and d.leased_by = $2 and d.attempts_made = s.attempt - 1
       returning d.order_no
     )
     insert into callback_attempts (order_no, attempt, kind, started_at, url, sent_by)
     select s.order_no, s.attempt, s.kind, now(), s.url, $2 from started s join moved m on m.order_no = s.order_no
     on conflict do nothing
     returning order_no`,
    [JSON.stringify(starts), instanceId, starts.map((start) => start.order_no)],
  );
  const held = new Set(rows.map((row) => row.order_no));
  return starts.map((start) => held.has(start.order_no));
}

/**
 * The attempts' results and their deliveries' next states, in one statement
 * and one commit; and the results counted, by the minute each attempt
 * started, in this instance's row of callback_attempt_minutes (one row per
 * minute and sender, so instances never wait on each other's counts). An
 * attempt is counted when its result is first recorded: a statement sent
 * again after a lost connection counts nothing twice.
 *
 * An acknowledged delivery leaves the schedule: its row is deleted (unless
 * staff asked for a redelivery while the attempt was in flight), so the
 * table holds the deliveries still to make and those that ran out of
 * attempts, not one row per order ever called back. Its attempts stay in
 * callback_attempts, which is what the delivery log and a manual redelivery
 * read of it (callback-log.queries.ts).
 */
export async function recordAttemptResults(pool: Pool, instanceId: string, results: readonly AttemptResult[]): Promise<void[]> {
  await pool.query(
    `with outcome as (select * from jsonb_to_recordset($1::jsonb)
                        as r(order_no text, attempt int, next text, delay_ms float8, status_code int, latency_ms int,
                             reply_excerpt text, acknowledged boolean, error text)),
     unrecorded as (
       select a.order_no, a.attempt, a.started_at, r.acknowledged from callback_attempts a join outcome r on a.order_no = r.order_no and a.attempt = r.attempt
       where a.order_no = any($3::text[]) and a.acknowledged is null
     ),
     counted as (
       insert into callback_attempt_minutes as m (minute, sent_by, acknowledged, not_acknowledged)
       select date_bin('1 minute', started_at, timestamptz '1970-01-01 00:00:00+00'), $2, count(*) filter (where acknowledged),
              count(*) filter (where not acknowledged)
       from unrecorded group by 1 order by 1
       on conflict (minute, sent_by) do update
         set acknowledged = m.acknowledged + excluded.acknowledged, not_acknowledged = m.not_acknowledged + excluded.not_acknowledged
     ),
     result as (
       update callback_attempts a set status_code = r.status_code, latency_ms = r.latency_ms, reply_excerpt = r.reply_excerpt,
         acknowledged = r.acknowledged, error = r.error
       from outcome r where a.order_no = any($3::text[]) and a.order_no = r.order_no and a.attempt = r.attempt
     ),
     -- By the acknowledged orders' numbers alone, joining nothing: joined with outcome, whose acknowledged rows the
     -- planner put at one, it became a nested loop over a sequential scan of the deliveries, once per result.
     delivered as (
       delete from callback_deliveries d
       where d.order_no = any($4::text[]) and d.leased_by = $2 and not d.manual_requested
     )
     -- A manual redelivery requested while the attempt was in flight still gets its attempt, now.
     update callback_deliveries d set lease_until = null,
       state = case when d.manual_requested then 'pending' else r.next end,
       max_attempts = case when d.manual_requested and r.next <> 'pending' then d.attempts_made + 1 else d.max_attempts end,
       due_at = case when d.manual_requested then now()
                     when r.next = 'pending' then now() + make_interval(secs => r.delay_ms / 1000) else d.due_at end
     from outcome r
     where d.order_no = any($3::text[]) and d.order_no = r.order_no and d.leased_by = $2
       and (r.next <> 'acknowledged' or d.manual_requested)`,
    [
      JSON.stringify(results),
      instanceId,
      results.map((result) => result.order_no),
      results.filter((result) => result.next === 'acknowledged').map((result) => result.order_no),
    ],
  );
  return results.map(() => undefined);
}

/**
 * Hands a leased delivery back unsent, marked with its merchant, for a
 * later claim: claimed before its merchant was known, or raced for the
 * merchant's last slot. Only the leaseholder can.
 */
export async function handBackDelivery(pool: Pool, orderNo: string, merchantId: string, instanceId: string): Promise<void> {
  await pool.query('update callback_deliveries set merchant_id = $2, lease_until = null where order_no = $1 and leased_by = $3', [
    orderNo,
    merchantId,
    instanceId,
  ]);
}
