import { RecordedEvent } from '../src/ledger/ports/event-store.port';
import { ORDER_STREAM_PREFIX } from '../src/ledger/streams';
import { Projection, Statement, TableNames } from './projection';

type Tables = 'fulfilment_jobs';

/** Events after which the upstream has nothing more to do for an order. */
const DONE = new Set(['OrderResultUnknown', 'OrderDeliveryConfirmed', 'OrderDeliveryFailed', 'OrderResolved', 'OrderSucceeded', 'OrderFailed']);

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

function applyFulfilmentEvent(event: RecordedEvent, t: TableNames<Tables>): Statement[] {
  if (!event.streamId.startsWith(ORDER_STREAM_PREFIX)) return [];
  const orderNo = event.streamId.slice(ORDER_STREAM_PREFIX.length);
  const d = event.data as Record<string, string>;
  if (event.type === 'OrderAccepted') {
    return [
      {
        text: `insert into ${t.fulfilment_jobs} (order_no, next_attempt_at, accepted_at) values ($1, $2, $2) on conflict do nothing`,
        values: [orderNo, d.at],
      },
    ];
  }
  if (DONE.has(event.type)) return [{ text: `update ${t.fulfilment_jobs} set done = true, lease_until = null where order_no = $1`, values: [orderNo] }];
  return [];
}
