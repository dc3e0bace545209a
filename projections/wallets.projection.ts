import { RecordedEvent } from '../src/ledger/ports/event-store.port';
import { WalletEvent, walletMovement } from '../src/ledger/wallet/wallet.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, Statement, TableNames } from './projection';

type Tables = 'rm_wallets' | 'rm_wallet_holds' | 'rm_statement_lines' | 'rm_wallet_snapshots';

/**
 * A wallet snapshot after every this many events of the wallet (revisions
 * 999, 1999, ...), so a balance as of any moment replays at most this many
 * events from the nearest one. Snapshots written under another interval stay
 * valid: the verification checks every snapshot against a replay.
 */
export const WALLET_SNAPSHOT_INTERVAL = 1000;

export const isSnapshotRevision = (revision: bigint | number) => (Number(revision) + 1) % WALLET_SNAPSHOT_INTERVAL === 0;

/**
 * Wallet balances, the holds behind the frozen amount, the statement (one
 * line per movement with the amounts after it) and periodic snapshots. One
 * projection, so a statement line, a snapshot and the balance they report
 * move in the same transaction. It runs after the events are committed, so
 * none of it costs a submit anything.
 */
export const walletsProjection: Projection<Tables> = {
  name: 'wallets',
  tables: ['rm_wallets', 'rm_wallet_holds', 'rm_statement_lines', 'rm_wallet_snapshots'],
  schema: [
    (t) => `
    create table ${t.rm_wallets} (
      merchant_id text        primary key,
      currency    text        not null,
      balance     bigint      not null,
      frozen      bigint      not null,
      available   bigint      not null,
      revision    bigint      not null,
      opened_at   timestamptz not null,
      updated_at  timestamptz not null
    );
    create table ${t.rm_wallet_holds} (
      merchant_id text        not null,
      order_no    text        not null,
      attempt     int         not null,
      amount      bigint      not null,
      frozen_at   timestamptz not null,
      primary key (merchant_id, order_no, attempt)
    );
    create index on ${t.rm_wallet_holds} (frozen_at);
    create table ${t.rm_statement_lines} (
      merchant_id      text        not null,
      revision         bigint      not null,
      position_commit  bigint      not null,
      position_prepare bigint      not null,
      entry_type       text        not null,
      order_no         text,
      attempt          int,
      reference        text,
      reason           text,
      amount           bigint      not null,
      balance_after    bigint      not null,
      frozen_after     bigint      not null,
      available_after  bigint      not null,
      occurred_at      timestamptz not null,
      primary key (merchant_id, revision)
    );
    create index on ${t.rm_statement_lines} (merchant_id, occurred_at);`,
    // The wallet after the event at `revision`, and which event that is: its
    // global position, the time the log recorded it and its chain hash.
    (t) => `
    create table ${t.rm_wallet_snapshots} (
      merchant_id      text        not null,
      revision         bigint      not null,
      position_commit  bigint      not null,
      position_prepare bigint      not null,
      recorded_at      timestamptz not null,
      event_hash       text        not null,
      balance          bigint      not null,
      frozen           bigint      not null,
      primary key (merchant_id, revision)
    );`,
  ],
  apply: applyWalletEvent,
};

/** The events that move money: each is a statement line. */
type Movement = Exclude<WalletEvent, { type: 'WalletOpened' }>;

/** What a statement line says of its movement besides the amounts. */
interface LineDetails {
  orderNo?: string;
  attempt?: number;
  reference?: string;
  reason?: string;
}

function applyWalletEvent(ledgerEvent: LedgerEvent, t: TableNames<Tables>): Statement[] {
  if (ledgerEvent.stream !== 'wallet') return [];
  const { merchantId, event, recorded } = ledgerEvent;
  const moved = (movement: Movement, details: LineDetails, holds: Statement[]): Statement[] => [
    statementLine(merchantId, movement, recorded, details, t),
    ...holds,
    ...snapshotAfter(recorded, merchantId, t),
  ];
  switch (event.type) {
    case 'WalletOpened':
      return [
        {
          text: `insert into ${t.rm_wallets} (merchant_id, currency, balance, frozen, available, revision, opened_at, updated_at)
               values ($1, $2, 0, 0, 0, $3, $4, $4)`,
          values: [merchantId, event.data.currency, recorded.revision, event.data.at],
        },
      ];
    case 'FundsDeposited':
      return moved(event, { reference: event.data.reference }, []);
    case 'FundsFrozen': {
      const { orderNo, attempt, amount, at } = event.data;
      return moved(event, { orderNo, attempt }, [
        {
          text: `insert into ${t.rm_wallet_holds} (merchant_id, order_no, attempt, amount, frozen_at) values ($1, $2, $3, $4, $5)`,
          values: [merchantId, orderNo, attempt, amount, at],
        },
      ]);
    }
    case 'FrozenFundsDeducted':
    case 'FrozenFundsReleased': {
      const { orderNo, attempt, reason } = event.data;
      return moved(event, { orderNo, attempt, reason }, [
        { text: `delete from ${t.rm_wallet_holds} where merchant_id = $1 and order_no = $2 and attempt = $3`, values: [merchantId, orderNo, attempt] },
      ]);
    }
    default:
      return assertNever(event);
  }
}

/**
 * The balance and the statement line that reports it, in one statement. A movement before
 * WalletOpened finds no wallet row: the line's balance is then null and the insert fails loudly.
 */
function statementLine(merchantId: string, event: Movement, recorded: RecordedEvent, details: LineDetails, t: TableNames<Tables>): Statement {
  const { balance: balanceDelta, frozen: frozenDelta } = walletMovement(event);
  return {
    text: `with moved as (
             update ${t.rm_wallets} set balance = balance + $2, frozen = frozen + $3, available = balance + $2 - (frozen + $3),
               revision = $4::bigint, updated_at = $13::timestamptz
             where merchant_id = $1 returning balance, frozen)
           insert into ${t.rm_statement_lines} (merchant_id, revision, position_commit, position_prepare, entry_type, order_no,
             attempt, reference, reason, amount, balance_after, frozen_after, available_after, occurred_at)
           select $1, $4::bigint, $5::bigint, $6::bigint, $7, $8, $9::int, $10, $11, $12::bigint,
                  moved.balance, moved.frozen, moved.balance - moved.frozen, $13::timestamptz
           from (values (1)) as one left join moved on true`,
    values: [
      merchantId,
      balanceDelta,
      frozenDelta,
      recorded.revision,
      recorded.position.commit,
      recorded.position.prepare,
      event.type,
      details.orderNo ?? null,
      details.attempt ?? null,
      details.reference ?? null,
      details.reason ?? null,
      event.data.amount,
      event.data.at,
    ],
  };
}

/** At a snapshot revision, the wallet as the statements before this one left it. An event stored without its chain link has no hash to anchor a snapshot on. */
function snapshotAfter(recorded: RecordedEvent, merchantId: string, t: TableNames<Tables>): Statement[] {
  if (!isSnapshotRevision(recorded.revision) || typeof recorded.metadata.hash !== 'string') return [];
  return [
    {
      text: `insert into ${t.rm_wallet_snapshots} (merchant_id, revision, position_commit, position_prepare, recorded_at, event_hash, balance, frozen)
             select merchant_id, $2::bigint, $3::bigint, $4::bigint, $5::timestamptz, $6, balance, frozen from ${t.rm_wallets} where merchant_id = $1`,
      values: [merchantId, recorded.revision, recorded.position.commit, recorded.position.prepare, recorded.createdAt.toISOString(), recorded.metadata.hash],
    },
  ];
}
