import { endsOrder } from '../src/ledger/order/order.decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

type Tables = 'callback_deliveries';

/**
 * One callback delivery per final order, due at once. Workers own the
 * schedule columns after that (attempts, due time, leases), so like the
 * fulfilment jobs this is workflow state, not a rebuildable read model. A
 * delivery is deleted when the merchant acknowledges it
 * (callback-schedule.queries.ts), so the table holds the deliveries still
 * to make and those that ran out of attempts. The insert never comes again
 * for an order: an order ends once, and the insert commits with the
 * checkpoint that moves past its event.
 */
export const callbackScheduleProjection: Projection<Tables> = {
  name: 'callback-schedule',
  tables: ['callback_deliveries'],
  inFlight: ['callback_deliveries'],
  migrations: [
    {
      id: 'projections/callback-schedule/001-tables',
      sql: (t) => `
    create table ${t.callback_deliveries} (
      order_no      text        primary key,
      -- Known after the first attempt loaded the order; used to cap each merchant's share.
      merchant_id   text,
      state         text        not null default 'pending' check (state in ('pending', 'acknowledged', 'exhausted')),
      attempts_made int         not null default 0,
      -- null: the standard schedule (1 + CALLBACK_RETRY_DELAYS); a manual redelivery extends it.
      max_attempts  int,
      manual_requested boolean    not null default false,
      due_at        timestamptz not null,
      lease_until   timestamptz,
      leased_by     text,
      created_at    timestamptz not null
    );
    create index on ${t.callback_deliveries} (due_at) where state = 'pending';`,
    },
    // The deliveries that ran out of attempts, counted by the operations dashboard without reading the others.
    {
      id: 'projections/callback-schedule/002-exhausted',
      sql: (t) => `
    create index on ${t.callback_deliveries} (created_at) where state = 'exhausted';`,
    },
    // Room for the two updates a delivery gets (its attempt started, its result) on the page it was inserted in.
    {
      id: 'projections/callback-schedule/003-fillfactor',
      sql: (t) => `alter table ${t.callback_deliveries} set (fillfactor = 70);`,
    },
    // Acknowledged deliveries leave the table; their attempts stay in callback_attempts.
    {
      id: 'projections/callback-schedule/004-only-undelivered',
      sql: (t) => `delete from ${t.callback_deliveries} where state = 'acknowledged';`,
    },
    // A claim that finds merchants whose slots are full filling its window of the oldest due deliveries takes
    // each merchant's oldest due deliveries from an index by merchant, so that what it reads does not grow with
    // their backlog; deliveries whose merchant is not on the row yet have an index of their own. The merchant was
    // written at the first attempt: the rows from before get it now.
    {
      id: 'projections/callback-schedule/005-by-merchant',
      sql: (t) => `
    update ${t.callback_deliveries} d set merchant_id = o.merchant_id from rm_orders o where d.merchant_id is null and o.order_no = d.order_no;
    create index on ${t.callback_deliveries} (merchant_id, due_at) where state = 'pending';
    create index on ${t.callback_deliveries} (due_at) where state = 'pending' and merchant_id is null;`,
    },
  ],
  apply: (event, t) => scheduleCallbacks([event], t),
  applyAll: scheduleCallbacks,
};

/** A batch's final orders' deliveries in one multi-row insert; an order's first final event sets its due time. */
function scheduleCallbacks(events: readonly LedgerEvent[], t: TableNames<Tables>): Statement[] {
  const due = new Map<string, string>();
  for (const ledgerEvent of events) {
    if (ledgerEvent.stream !== 'order') continue;
    const { orderNo, event } = ledgerEvent;
    if (endsOrder(event) && !due.has(orderNo)) due.set(orderNo, event.data.at);
  }
  if (due.size === 0) return [];
  const rows = unnestRows(
    [...due].map(([orderNo, at]) => [orderNo, at, at]),
    ['text', 'timestamptz', 'timestamptz'],
  );
  return [
    {
      // The merchant from the order's row, which the orders projection brought up to date earlier in the same batch.
      text: `insert into ${t.callback_deliveries} (order_no, merchant_id, due_at, created_at)
        select d.order_no, o.merchant_id, d.due_at, d.created_at from ${rows.source} as d(order_no, due_at, created_at)
        left join rm_orders o on o.order_no = d.order_no
        on conflict do nothing`,
      values: rows.values,
    },
  ];
}
