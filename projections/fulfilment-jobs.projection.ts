import { OrderEvent } from '../src/ledger/order/order.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

type Tables = 'fulfilment_jobs';

/**
 * The fulfilment work queue: one job per accepted order whose upstream part
 * is not over, fed by a checkpointed subscription. Workers lease jobs on the
 * same rows (the lease columns are theirs), so this is workflow state, not a
 * rebuildable read model. A job is deleted when its order's upstream part
 * ends: the queue holds the work in flight, not the history (that is the log).
 */
export const fulfilmentJobsProjection: Projection<Tables> = {
  name: 'fulfilment-jobs',
  tables: ['fulfilment_jobs'],
  inFlight: ['fulfilment_jobs'],
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
    // Finished jobs were kept, marked done, so the queue grew with the log and its pages crowded Postgres's cache.
    {
      id: 'projections/fulfilment-jobs/003-only-work-in-flight',
      sql: (t) => `
    delete from ${t.fulfilment_jobs} where done;
    alter table ${t.fulfilment_jobs} drop column done;
    create index on ${t.fulfilment_jobs} (next_attempt_at);`,
    },
  ],
  apply: (event, t) => applyFulfilmentEvents([event], t),
  applyAll: applyFulfilmentEvents,
};

/**
 * A batch's jobs in at most two set-wise statements: one inserts the
 * accepted orders' jobs, one deletes those the upstream has nothing more
 * to do for. An order accepted and finished within the batch gets no job.
 * The checkpoint moves in the same transaction, so an acceptance is never
 * applied again after its job was deleted.
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
  for (const orderNo of finished) created.delete(orderNo);
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
      text: `delete from ${t.fulfilment_jobs} where order_no = any($1::text[])`,
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
