import type { OrderEvent } from '../src/ledger/order/order.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

type Tables = 'rm_order_minutes' | 'rm_upstream_latency' | 'rm_upstream_sends';

/**
 * The lower bounds, in milliseconds, of the upstream latency buckets: bucket
 * 0 holds answers under the first bound, bucket i those from bound i-1 up to
 * bound i, the last one everything from 60 s on. Postgres's width_bucket
 * picks the bucket, so the bounds are written once, here. Never edit them:
 * the rows written under them would be read under other bounds. A change is
 * a new projection migration and a rebuild.
 */
export const UPSTREAM_LATENCY_BOUNDS_MS: readonly number[] = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10_000, 15_000, 20_000, 30_000, 60_000,
];

/**
 * What an order event counts for in its minute: the outcomes orders reach
 * (accepted, refused, unknown, resolved by staff, succeeded, failed), the
 * sends to the upstream, and the upstream's answers to them. Each is a
 * column of rm_order_minutes.
 */
export const MINUTE_COUNTS = [
  'accepted',
  'refused',
  'unknown',
  'resolved',
  'succeeded',
  'failed',
  'sent',
  'answered_delivered',
  'answered_refused',
  'answered_unknown',
  'answered_retried',
] as const;
export type MinuteCount = (typeof MINUTE_COUNTS)[number];

/** The answers whose time from the send is measured: the definitive ones and the unknown (mostly timeouts). */
const TIMED: readonly MinuteCount[] = ['answered_delivered', 'answered_refused', 'answered_unknown'];

/**
 * Orders and the upstream per minute, for the operations dashboard: how many
 * orders reached each outcome in each minute (by the time the event
 * carries), how many sends went upstream, how the upstream answered them, and
 * a histogram of the time from each send to its answer. A send waits in
 * rm_upstream_sends until its answer (or the next send of the order) comes,
 * possibly in a later batch. Rows are only ever added to, so a minute costs
 * one row however many orders it saw, and the dashboard reads a window's
 * rows by their primary key, never the orders.
 */
export const orderMinutesProjection: Projection<Tables> = {
  name: 'order-minutes',
  tables: ['rm_order_minutes', 'rm_upstream_latency', 'rm_upstream_sends'],
  inFlight: ['rm_upstream_sends'],
  migrations: [
    {
      id: 'projections/order-minutes/001-tables',
      sql: (t) => `
    create table ${t.rm_order_minutes} (
      minute             timestamptz primary key,
      accepted           int not null default 0,
      refused            int not null default 0,
      unknown            int not null default 0,
      resolved           int not null default 0,
      succeeded          int not null default 0,
      failed             int not null default 0,
      sent               int not null default 0,
      answered_delivered int not null default 0,
      answered_refused   int not null default 0,
      answered_unknown   int not null default 0,
      answered_retried   int not null default 0
    );
    create table ${t.rm_upstream_latency} (
      minute  timestamptz not null,
      bucket  smallint    not null,
      answers int         not null,
      primary key (minute, bucket)
    );
    create table ${t.rm_upstream_sends} (
      order_no text        primary key,
      sent_at  timestamptz not null
    );`,
    },
  ],
  apply: (event, t) => countMinutes([event], t),
  applyAll: countMinutes,
};

/**
 * One thing an event counts: an order number, what it counts for, when, and
 * for an answer the send it answers. `lookUp`: the send is not in the batch,
 * so the statement looks for it in rm_upstream_sends, and counts the answer
 * only if it finds one.
 */
type Fact = [orderNo: string, count: MinuteCount, at: string, sentAt: string | null, lookUp: boolean];

/**
 * A batch's events in at most three statements: one adds the batch's counts
 * to their minutes and its answers' times to the histogram (reading the
 * sends earlier batches left open), one deletes the sends answered, one
 * writes those still open. Within the batch an order's sends and answers
 * are paired here; only an order's first send or answer in the batch may
 * need a send from the table, which the first statement reads before the
 * other two change it.
 */
function countMinutes(events: readonly LedgerEvent[], t: TableNames<Tables>): Statement[] {
  const facts: Fact[] = [];
  /** Each order's send as the batch leaves it: its time, or null when answered. Not listed: the batch did not touch it. */
  const sends = new Map<string, string | null>();
  for (const ledgerEvent of events) {
    if (ledgerEvent.stream !== 'order') continue;
    const { orderNo, event } = ledgerEvent;
    const at = event.data.at;
    const { outcome, answer } = countsOf(event);
    if (outcome) facts.push([orderNo, outcome, at, null, false]);
    if (!answer) continue;
    const open = sends.get(orderNo);
    // An answer counts only when a send is open: a release before any send (no route) was no answer.
    if (open === undefined) facts.push([orderNo, answer, at, null, true]);
    else if (open !== null) facts.push([orderNo, answer, at, open, false]);
    sends.set(orderNo, event.type === 'OrderSentUpstream' ? at : null);
  }
  if (facts.length === 0) return [];
  const statements: Statement[] = [countStatement(facts, t)];
  const answered = [...sends].filter(([, sentAt]) => sentAt === null).map(([orderNo]) => orderNo);
  if (answered.length > 0) {
    statements.push({ text: `delete from ${t.rm_upstream_sends} where order_no = any($1::text[])`, values: [answered] });
  }
  const open = [...sends].filter((send): send is [string, string] => send[1] !== null);
  if (open.length > 0) {
    const rows = unnestRows(open, ['text', 'timestamptz']);
    statements.push({
      text: `insert into ${t.rm_upstream_sends} (order_no, sent_at) select * from ${rows.source}
             on conflict (order_no) do update set sent_at = excluded.sent_at`,
      values: rows.values,
    });
  }
  return statements;
}

/** Minutes are whole UTC minutes, whatever the session's time zone. */
const MINUTE = `date_bin('1 minute', f.at, timestamptz '1970-01-01 00:00:00+00')`;
const BOUNDS = `'{${UPSTREAM_LATENCY_BOUNDS_MS.join(',')}}'::float8[]`;

function countStatement(facts: readonly Fact[], t: TableNames<Tables>): Statement {
  const sums = MINUTE_COUNTS.map((count) => `count(*) filter (where kind = '${count}')`);
  const rows = unnestRows(facts, ['text', 'text', 'timestamptz', 'timestamptz', 'boolean']);
  return {
    text: `with f (order_no, kind, at, sent_at, look_up) as (select * from ${rows.source}),
           counted as (
             select f.kind, ${MINUTE} as minute, f.at, coalesce(f.sent_at, s.sent_at) as sent_at
             from f left join ${t.rm_upstream_sends} s on f.look_up and s.order_no = f.order_no
             where not f.look_up or s.order_no is not null),
           timed as (
             insert into ${t.rm_upstream_latency} as l (minute, bucket, answers)
             select minute, width_bucket(extract(epoch from at - sent_at)::float8 * 1000, ${BOUNDS}), count(*)
             from counted where kind in (${TIMED.map((count) => `'${count}'`).join(', ')})
             group by 1, 2
             on conflict (minute, bucket) do update set answers = l.answers + excluded.answers)
           insert into ${t.rm_order_minutes} as m (minute, ${MINUTE_COUNTS.join(', ')})
           select minute, ${sums.join(', ')} from counted group by minute
           on conflict (minute) do update set ${MINUTE_COUNTS.map((count) => `${count} = m.${count} + excluded.${count}`).join(', ')}`,
    values: rows.values,
  };
}

/**
 * What an order event counts for: an outcome the order reached, and as the
 * upstream's side of it, a send or an answer to the open send. The ledger
 * records no retryable answer (a refused connection, a 503): the next send
 * of the order, or its release as UPSTREAM_UNAVAILABLE once the attempts run
 * out, shows that the send before it got no definitive answer (or that its
 * worker stopped mid-way), and counts as `answered_retried`.
 */
function countsOf(event: OrderEvent): { outcome?: MinuteCount; answer?: MinuteCount } {
  switch (event.type) {
    case 'OrderAccepted':
      return { outcome: 'accepted' };
    case 'OrderRefused':
      return { outcome: 'refused' };
    case 'OrderSentUpstream':
      return { outcome: 'sent', answer: 'answered_retried' };
    case 'OrderResultUnknown':
      return { outcome: 'unknown', answer: 'answered_unknown' };
    case 'OrderDeliveryConfirmed':
      return { answer: 'answered_delivered' };
    case 'OrderDeliveryFailed':
      return { answer: event.data.failCode === 'UPSTREAM_UNAVAILABLE' ? 'answered_retried' : 'answered_refused' };
    case 'OrderResolved':
      return { outcome: 'resolved' };
    case 'OrderSucceeded':
      return { outcome: 'succeeded' };
    case 'OrderFailed':
      return { outcome: 'failed' };
    case 'OrderPlaced':
      return {};
    default:
      return assertNever(event);
  }
}
