import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';

type Tables = 'fulfilment_jobs';

/**
 * The fulfilment work queue: one job per accepted order, fed by a
 * checkpointed subscription. Workers lease jobs on the same rows (the lease
 * columns are theirs), so this is workflow state, not a rebuildable read model.
 */
export const fulfilmentJobsProjection: Projection<Tables> = {
  name: 'fulfilment-jobs',
  tables: ['fulfilment_jobs'],
  schema: [
    (t) => `
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
  ],
  apply: applyFulfilmentEvent,
};

function applyFulfilmentEvent(ledgerEvent: LedgerEvent, t: TableNames<Tables>): Statement[] {
  if (ledgerEvent.stream !== 'order') return [];
  const { orderNo, event } = ledgerEvent;
  switch (event.type) {
    case 'OrderAccepted':
      return [
        {
          text: `insert into ${t.fulfilment_jobs} (order_no, next_attempt_at, accepted_at) values ($1, $2, $2) on conflict do nothing`,
          values: [orderNo, event.data.at],
        },
      ];
    // The upstream has nothing more to do for the order.
    case 'OrderResultUnknown':
    case 'OrderDeliveryConfirmed':
    case 'OrderDeliveryFailed':
    case 'OrderResolved':
    case 'OrderSucceeded':
    case 'OrderFailed':
      return [{ text: `update ${t.fulfilment_jobs} set done = true, lease_until = null where order_no = $1 and not done`, values: [orderNo] }];
    // Before acceptance there is no job; a send is the job's own doing.
    case 'OrderPlaced':
    case 'OrderRefused':
    case 'OrderSentUpstream':
      return [];
    default:
      return assertNever(event);
  }
}
