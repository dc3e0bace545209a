import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';

type Tables = 'callback_deliveries';

/**
 * One callback delivery per final order, due at once. Workers own the
 * schedule columns after that (attempts, due time, leases), so like the
 * fulfilment jobs this is workflow state, not a rebuildable read model.
 */
export const callbackScheduleProjection: Projection<Tables> = {
  name: 'callback-schedule',
  tables: ['callback_deliveries'],
  schema: [
    (t) => `
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
  ],
  apply: applyScheduleEvent,
};

function applyScheduleEvent(ledgerEvent: LedgerEvent, t: TableNames<Tables>): Statement[] {
  if (ledgerEvent.stream !== 'order') return [];
  const { orderNo, event } = ledgerEvent;
  switch (event.type) {
    case 'OrderSucceeded':
    case 'OrderFailed':
      return [
        {
          text: `insert into ${t.callback_deliveries} (order_no, due_at, created_at) values ($1, $2, $2) on conflict do nothing`,
          values: [orderNo, event.data.at],
        },
      ];
    // Only a final order is called back.
    case 'OrderPlaced':
    case 'OrderAccepted':
    case 'OrderRefused':
    case 'OrderSentUpstream':
    case 'OrderResultUnknown':
    case 'OrderDeliveryConfirmed':
    case 'OrderDeliveryFailed':
    case 'OrderResolved':
      return [];
    default:
      return assertNever(event);
  }
}
