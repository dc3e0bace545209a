import { holdKey, merchantHoldKey, WalletEvent, walletMovement } from '../src/ledger/wallet/wallet.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, SqlValue, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

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
  inFlight: ['rm_wallet_holds'],
  migrations: [
    {
      id: 'projections/wallets/001-tables',
      sql: (t) => `
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
    },
    // The wallet after the event at `revision`, and which event that is: its
    // global position, the time the log recorded it and its chain hash.
    {
      id: 'projections/wallets/002',
      sql: (t) => `
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
    },
    // An order's adjustments, for the order's page: few rows, found without reading the wallet's statement.
    {
      id: 'projections/wallets/003-adjustments-by-order',
      sql: (t) => `create index on ${t.rm_statement_lines} (order_no) where entry_type = 'WalletAdjusted';`,
    },
  ],
  apply: (event, t) => applyWalletEvents([event], t),
  applyAll: applyWalletEvents,
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

/** The wallet at its opening, before any movement. */
function openWallet(merchantId: string, opened: Extract<WalletEvent, { type: 'WalletOpened' }>, revision: bigint, t: TableNames<Tables>): Statement {
  return {
    text: `insert into ${t.rm_wallets} (merchant_id, currency, balance, frozen, available, revision, opened_at, updated_at)
           values ($1, $2, 0, 0, 0, $3, $4, $4)`,
    values: [merchantId, opened.data.currency, revision, opened.data.at],
  };
}

/**
 * A batch's wallet events in a few set-wise statements instead of two or
 * three per event: per run of movements between WalletOpened events, one
 * statement moves each wallet once and writes the run's statement lines and
 * snapshots, one inserts the holds it opens and one deletes those it closes.
 * A hold opened and closed in the same run is never written. Whatever the
 * batches, the tables end the same; a movement of a wallet never opened
 * finds no balance, and its statement line's insert fails.
 */
function applyWalletEvents(events: readonly LedgerEvent[], t: TableNames<Tables>): Statement[] {
  const statements: Statement[] = [];
  let run: MovementEvent[] = [];
  const flush = () => {
    if (run.length > 0) statements.push(...applyMovements(run, t));
    run = [];
  };
  for (const ledgerEvent of events) {
    if (ledgerEvent.stream !== 'wallet') continue;
    const { merchantId, event, recorded } = ledgerEvent;
    if (event.type === 'WalletOpened') {
      // A movement is applied after the opening before it.
      flush();
      statements.push(openWallet(merchantId, event, recorded.revision, t));
    } else run.push({ merchantId, event, recorded });
  }
  flush();
  return statements;
}

type MovementEvent = Omit<Extract<LedgerEvent, { stream: 'wallet' }>, 'stream' | 'event'> & { event: Movement };

/** The columns of a run's movements as the set-wise statement takes them, with the SQL type of each array. */
const MOVEMENT_COLUMNS: readonly [string, string][] = [
  ['merchant_id', 'text'],
  ['revision', 'bigint'],
  ['position_commit', 'bigint'],
  ['position_prepare', 'bigint'],
  ['entry_type', 'text'],
  ['order_no', 'text'],
  ['attempt', 'int'],
  ['reference', 'text'],
  ['reason', 'text'],
  ['amount', 'bigint'],
  ['balance_delta', 'bigint'],
  ['frozen_delta', 'bigint'],
  ['occurred_at', 'timestamptz'],
  ['snapshot_recorded_at', 'timestamptz'],
  ['snapshot_hash', 'text'],
];
const MOVEMENT_NAMES = MOVEMENT_COLUMNS.map(([name]) => name).join(', ');
const MOVEMENT_TYPES = MOVEMENT_COLUMNS.map(([, type]) => type);

function applyMovements(run: readonly MovementEvent[], t: TableNames<Tables>): Statement[] {
  const movements: SqlValue[][] = [];
  const opened = new Map<string, SqlValue[]>();
  const closed: SqlValue[][] = [];
  for (const { merchantId, event, recorded } of run) {
    const { balance, frozen } = walletMovement(event);
    const details = lineDetails(event);
    const snapshot = isSnapshotRevision(recorded.revision) && typeof recorded.metadata.hash === 'string';
    movements.push([
      merchantId,
      recorded.revision,
      recorded.position.commit,
      recorded.position.prepare,
      event.type,
      details.orderNo ?? null,
      details.attempt ?? null,
      details.reference ?? null,
      details.reason ?? null,
      event.data.amount,
      balance,
      frozen,
      event.data.at,
      snapshot ? recorded.createdAt.toISOString() : null,
      snapshot ? (recorded.metadata.hash as string) : null,
    ]);
    // Deposits and adjustments move the balance alone: no hold opens or closes.
    if (event.type === 'FundsDeposited' || event.type === 'WalletAdjusted') continue;
    const hold = merchantHoldKey(merchantId, holdKey(event.data.orderNo, event.data.attempt));
    if (event.type === 'FundsFrozen') opened.set(hold, [merchantId, event.data.orderNo, event.data.attempt, event.data.amount, event.data.at]);
    else if (!opened.delete(hold)) closed.push([merchantId, event.data.orderNo, event.data.attempt]);
  }
  const movementRows = unnestRows(movements, MOVEMENT_TYPES);
  const statements: Statement[] = [
    {
      text: `with movement (${MOVEMENT_NAMES}) as (select * from ${movementRows.source}),
             total as (
               select merchant_id, sum(balance_delta) as balance_delta, sum(frozen_delta) as frozen_delta, max(revision) as revision,
                      (array_agg(occurred_at order by revision desc))[1] as updated_at
               from movement group by merchant_id),
             moved as (
               update ${t.rm_wallets} w set balance = w.balance + total.balance_delta, frozen = w.frozen + total.frozen_delta,
                 available = w.balance + total.balance_delta - (w.frozen + total.frozen_delta), revision = total.revision, updated_at = total.updated_at
               from total where w.merchant_id = total.merchant_id
               returning w.merchant_id, (w.balance - total.balance_delta)::bigint as balance_before, (w.frozen - total.frozen_delta)::bigint as frozen_before),
             line as (
               select movement.*,
                      moved.balance_before + sum(movement.balance_delta) over running as balance_after,
                      moved.frozen_before + sum(movement.frozen_delta) over running as frozen_after
               from movement left join moved using (merchant_id)
               window running as (partition by movement.merchant_id order by movement.revision)),
             written as (
               insert into ${t.rm_statement_lines} (merchant_id, revision, position_commit, position_prepare, entry_type, order_no,
                 attempt, reference, reason, amount, balance_after, frozen_after, available_after, occurred_at)
               select merchant_id, revision, position_commit, position_prepare, entry_type, order_no, attempt, reference, reason, amount,
                      balance_after, frozen_after, balance_after - frozen_after, occurred_at
               from line)
           insert into ${t.rm_wallet_snapshots} (merchant_id, revision, position_commit, position_prepare, recorded_at, event_hash, balance, frozen)
           select merchant_id, revision, position_commit, position_prepare, snapshot_recorded_at, snapshot_hash, balance_after, frozen_after
           from line where snapshot_hash is not null`,
      values: movementRows.values,
    },
  ];
  if (opened.size > 0) {
    const holds = unnestRows([...opened.values()], ['text', 'text', 'int', 'bigint', 'timestamptz']);
    statements.push({
      text: `insert into ${t.rm_wallet_holds} (merchant_id, order_no, attempt, amount, frozen_at) select * from ${holds.source}`,
      values: holds.values,
    });
  }
  if (closed.length > 0) {
    const holds = unnestRows(closed, ['text', 'text', 'int']);
    statements.push({
      text: `delete from ${t.rm_wallet_holds} h using ${holds.source} as closed (merchant_id, order_no, attempt)
             where h.merchant_id = closed.merchant_id and h.order_no = closed.order_no and h.attempt = closed.attempt`,
      values: holds.values,
    });
  }
  return statements;
}

function lineDetails(event: Movement): LineDetails {
  switch (event.type) {
    case 'FundsDeposited':
      return { reference: event.data.reference };
    case 'FundsFrozen':
      return { orderNo: event.data.orderNo, attempt: event.data.attempt };
    case 'FrozenFundsDeducted':
    case 'FrozenFundsReleased':
      return { orderNo: event.data.orderNo, attempt: event.data.attempt, reason: event.data.reason };
    case 'WalletAdjusted':
      return { orderNo: event.data.orderNo, reference: event.data.reference, reason: event.data.reason };
    default:
      return assertNever(event);
  }
}
