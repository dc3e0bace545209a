import { OrderEvent } from '../src/ledger/order/order.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

type Tables = 'fulfilment_jobs';

/**
 * The fulfilment work queue: one job per accepted order, fed by a
 * checkpointed subscription. Workers lease jobs on the same rows (the lease
 * columns are theirs), so this is workflow state, not a rebuildable read model.
 */
export const fulfilmentJobsProjection: Projection<Tables> = {
  name: 'fulfilment-jobs',
  tables: ['fulfilment_jobs'],
  migrations: [
    {
      id: 'projections/fulfilment-jobs/001-tables',
      sql: (t) => `
    create table ${t.fulfilment_jobs} (
      order_no        text        primary key,
      done            boolean     not null default false,
      -- Sends that never reached the upstream (connection refused, 503).
      attempts        int         not null default 0,
      next_attempt_at timestamptz not null,
      lease_until     timestamptz,
      leased_by       text,
      last_error      text,
      accepted_at     timestamptz not null
    );
    create index on ${t.fulfilment_jobs} (next_attempt_at) where not done;`,
    },
    // Room for a job's claim and its end on its own page: the claim touches no indexed column, so it can be a HOT update.
    {
      id: 'projections/fulfilment-jobs/002-fillfactor',
      sql: (t) => `alter table ${t.fulfilment_jobs} set (fillfactor = 70);`,
    },
  ],
  apply: (event, t) => applyFulfilmentEvents([event], t),
  applyAll: applyFulfilmentEvents,
};

/**
 * A batch's jobs in at most two set-wise statements: one inserts the
 * accepted orders' jobs, one marks done those the upstream has nothing more
 * to do for. Inserting first is what the events one by one do, as an
 * order's job is finished only after its acceptance.
 */
function applyFulfilmentEvents(events: readonly LedgerEvent[], t: TableNames<Tables>): Statement[] {
  const created = new Map<string, string>();
  const finished = new Set<string>();
  for (const ledgerEvent of events) {
    if (ledgerEvent.stream !== 'order') continue;
    const { orderNo, event } = ledgerEvent;
    const effect = effectOnJob(event);
    if (effect === 'create' && !created.has(orderNo)) created.set(orderNo, event.data.at);
    else if (effect === 'finish') finished.add(orderNo);
  }
  const statements: Statement[] = [];
  if (created.size > 0) {
    const rows = unnestRows(
      [...created].map(([orderNo, at]) => [orderNo, at, at]),
      ['text', 'timestamptz', 'timestamptz'],
    );
    statements.push({
      text: `insert into ${t.fulfilment_jobs} (order_no, next_attempt_at, accepted_at) select * from ${rows.source} on conflict do nothing`,
      values: rows.values,
    });
  }
  if (finished.size > 0) {
    statements.push({
      text: `update ${t.fulfilment_jobs} set done = true, lease_until = null where order_no = any($1::text[]) and not done`,
      values: [[...finished]],
    });
  }
  return statements;
}

function effectOnJob(event: OrderEvent): 'create' | 'finish' | 'none' {
  switch (event.type) {
    case 'OrderAccepted':
      return 'create';
    // The upstream has nothing more to do for the order.
    case 'OrderResultUnknown':
    case 'OrderDeliveryConfirmed':
    case 'OrderDeliveryFailed':
    case 'OrderResolved':
    case 'OrderSucceeded':
    case 'OrderFailed':
      return 'finish';
    // Before acceptance there is no job; a send is the job's own doing.
    case 'OrderPlaced':
    case 'OrderRefused':
    case 'OrderSentUpstream':
      return 'none';
    default:
      return assertNever(event);
  }
}
