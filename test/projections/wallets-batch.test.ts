import { LedgerEvent } from '../../projections/ledger-event';
import { TableNames } from '../../projections/projection';
import { inlineStatements } from '../../projections/statement-batch';
import { walletsProjection } from '../../projections/wallets.projection';
import { walletStream } from '../../src/ledger/streams';
import { WalletEvent } from '../../src/ledger/wallet/wallet.decider';
import { projectionCases, recordedLedgerEvent } from '../support/projection-cases';

type Tables = 'rm_wallets' | 'rm_wallet_holds' | 'rm_statement_lines' | 'rm_wallet_snapshots';
type WalletLedgerEvent = Extract<LedgerEvent, { stream: 'wallet' }>;

/**
 * The wallets projection applies a batch's movements set-wise. Whatever the
 * batches the runner hands it, the balances, holds, statement lines and
 * snapshots must be what applying the events one by one makes.
 */
describe('wallets projection: batches of events, applied set-wise, leave what the events add up to', () => {
  const cases = projectionCases(walletsProjection);

  /**
   * Three wallets' events interleaved as the log holds them: the first is
   * long enough for a snapshot (revision 999), the third opens halfway
   * through; orders freeze, and later (often in the same batch) are deducted
   * or released; a few stay frozen at the end.
   */
  function walletLog(): LedgerEvent[] {
    const log: LedgerEvent[] = [];
    const pending: (() => void)[] = [];
    const revisions = new Map<string, number>();
    const at = () => new Date(Date.UTC(2026, 10, 25, 10) + log.length * 1000).toISOString();
    const record = (merchantId: string, event: WalletEvent) => {
      const revision = revisions.get(merchantId) ?? 0;
      revisions.set(merchantId, revision + 1);
      const position = { commit: BigInt(log.length + 1), prepare: BigInt(log.length + 1) };
      log.push(recordedLedgerEvent(walletStream(merchantId), BigInt(revision), position, event, { hash: `hash-${merchantId}-${revision}` }));
    };
    const open = (merchantId: string) => {
      record(merchantId, { type: 'WalletOpened', data: { merchantId, currency: 'USD', at: at() } });
      record(merchantId, { type: 'FundsDeposited', data: { reference: `dep-${merchantId}`, amount: 10_000_000n, by: 'staff-1', at: at() } });
    };
    open('mch_a');
    open('mch_b');
    for (let i = 0; i < 1200; i++) {
      if (i === 350) open('mch_c');
      const merchantId = i % 5 === 4 ? 'mch_b' : i > 350 && i % 5 === 3 ? 'mch_c' : 'mch_a';
      const orderNo = `ord-${i}`;
      const amount = BigInt(100 + i);
      record(merchantId, { type: 'FundsFrozen', data: { orderNo, attempt: 1, amount, at: at() } });
      if (i % 10 === 9) continue;
      const settle = () =>
        i % 4 === 0
          ? record(merchantId, { type: 'FrozenFundsReleased', data: { orderNo, attempt: 1, amount, reason: 'upstream said no', at: at() } })
          : record(merchantId, { type: 'FrozenFundsDeducted', data: { orderNo, attempt: 1, amount, at: at() } });
      // Most settle at once (the same batch, often), some further on.
      if (i % 3 === 0) settle();
      else pending.push(settle);
      if (pending.length > 4) pending.shift()!();
    }
    while (pending.length > 0) pending.shift()!();
    return log;
  }

  const TABLE_ORDER: Record<Tables, string> = {
    rm_wallets: 'merchant_id',
    rm_wallet_holds: 'merchant_id, order_no, attempt',
    rm_statement_lines: 'merchant_id, revision',
    rm_wallet_snapshots: 'merchant_id, revision',
  };
  async function rows(t: TableNames<Tables>): Promise<Record<Tables, Record<string, unknown>[]>> {
    const result = {} as Record<Tables, Record<string, unknown>[]>;
    for (const [table, order] of Object.entries(TABLE_ORDER) as [Tables, string][]) {
      result[table] = (await cases.pool().query(`select * from ${t[table]} order by ${order}`)).rows;
    }
    return result;
  }

  /** The rows after the runner applied the batches, each in its own transaction. */
  async function rowsAfter(batches: LedgerEvent[][]): Promise<Record<Tables, Record<string, unknown>[]>> {
    return rows(await cases.applied(batches));
  }

  /** What the tables must hold after the log, folded here in plain arithmetic (amounts as Postgres returns bigints: text). */
  function folded(log: LedgerEvent[]) {
    const wallets = new Map<string, { balance: bigint; frozen: bigint; revision: bigint }>();
    const holds = new Map<string, string[]>();
    const lines: string[][] = [];
    const snapshots: string[][] = [];
    for (const { merchantId, event, recorded } of log as WalletLedgerEvent[]) {
      if (event.type === 'WalletOpened') {
        wallets.set(merchantId, { balance: 0n, frozen: 0n, revision: recorded.revision });
        continue;
      }
      const w = wallets.get(merchantId)!;
      const { amount } = event.data;
      if (event.type === 'FundsDeposited') w.balance += amount;
      if (event.type === 'FundsFrozen') w.frozen += amount;
      if (event.type === 'FrozenFundsDeducted') {
        w.balance -= amount;
        w.frozen -= amount;
      }
      if (event.type === 'FrozenFundsReleased') w.frozen -= amount;
      w.revision = recorded.revision;
      const orderNo = 'orderNo' in event.data ? event.data.orderNo : null;
      const hold = `${merchantId}/${orderNo}`;
      if (event.type === 'FundsFrozen') holds.set(hold, [merchantId, orderNo!, String(amount)]);
      else holds.delete(hold);
      lines.push([
        merchantId,
        String(recorded.revision),
        event.type,
        String(orderNo),
        String(amount),
        String(w.balance),
        String(w.frozen),
        String(w.balance - w.frozen),
      ]);
      if ((recorded.revision + 1n) % 1000n === 0n)
        snapshots.push([merchantId, String(recorded.revision), String(w.balance), String(w.frozen), String(recorded.metadata.hash)]);
    }
    const sorted = (rows: string[][]) => rows.sort((x, y) => (x[0] + x[1].padStart(9) < y[0] + y[1].padStart(9) ? -1 : 1));
    return {
      wallets: [...wallets].sort().map(([m, w]) => [m, String(w.balance), String(w.frozen), String(w.balance - w.frozen), String(w.revision)]),
      holds: [...holds.values()].sort((x, y) => (x[0] + x[1] < y[0] + y[1] ? -1 : 1)),
      lines: sorted(lines),
      snapshots: sorted(snapshots),
    };
  }
  const picked = (rows: Record<Tables, Record<string, unknown>[]>) => {
    const pick = (table: Tables, columns: string[]) => rows[table].map((row) => columns.map((c) => String(row[c])));
    return {
      wallets: pick('rm_wallets', ['merchant_id', 'balance', 'frozen', 'available', 'revision']),
      holds: pick('rm_wallet_holds', ['merchant_id', 'order_no', 'amount']),
      lines: pick('rm_statement_lines', ['merchant_id', 'revision', 'entry_type', 'order_no', 'amount', 'balance_after', 'frozen_after', 'available_after']),
      snapshots: pick('rm_wallet_snapshots', ['merchant_id', 'revision', 'balance', 'frozen', 'event_hash']),
    };
  };

  it('one batch, batches of seven and one event at a time leave the balances, holds, lines and snapshots the events add up to', async () => {
    const log = walletLog();
    const expected = folded(log);
    // The log is what the cases need: a snapshot, holds still open, a wallet opened midway.
    expect(expected.snapshots).toHaveLength(1);
    expect(expected.holds.length).toBeGreaterThan(50);
    expect(expected.wallets).toHaveLength(3);
    expect(expected.lines).toHaveLength(log.length - 3);

    const applyAll = jest.spyOn(walletsProjection, 'applyAll');
    const whole = await rowsAfter([log]);
    expect(applyAll.mock.calls.map(([events]) => events.length)).toEqual([log.length]);
    applyAll.mockRestore();
    expect(picked(whole)).toEqual(expected);
    const sevens: LedgerEvent[][] = [];
    for (let i = 0; i < log.length; i += 7) sevens.push(log.slice(i, i + 7));
    expect(await rowsAfter(sevens)).toEqual(whole);
    const t = await cases.freshTables();
    for (const event of log) await cases.pool().query(inlineStatements(walletsProjection.apply(event, t)));
    expect(await rows(t)).toEqual(whole);
  });

  it('moves each wallet once per run of movements, and never writes a hold opened and closed in the batch', async () => {
    const log = walletLog().slice(20, 200);
    expect(log.every((e) => e.event.type !== 'WalletOpened')).toBe(true);
    const holdOf = (e: LedgerEvent) => (e.event.data as { orderNo: string }).orderNo;
    const frozenHere = new Set(log.filter((e) => e.event.type === 'FundsFrozen').map(holdOf));
    const closed = log.filter((e) => e.event.type.startsWith('FrozenFunds')).map(holdOf);
    const stillOpen = [...frozenHere].filter((orderNo) => !closed.includes(orderNo));
    const closedFromBefore = closed.filter((orderNo) => !frozenHere.has(orderNo));
    expect(stillOpen.length).toBeGreaterThan(0);
    expect(closedFromBefore.length).toBeGreaterThan(0);

    const statements = walletsProjection.applyAll!(log, await cases.freshTables());
    // The movements with their lines; the holds still open at the batch's end; the holds it closed that were opened before it.
    expect(statements).toHaveLength(3);
    expect(statements[0].text).toMatch(/^with movement/);
    // Each statement takes its rows as one array per column: the order numbers are the second.
    expect(new Set(statements[1].values![1] as string[])).toEqual(new Set(stillOpen));
    expect(new Set(statements[2].values![1] as string[])).toEqual(new Set(closedFromBefore));
  });

  it('fails loudly on a movement of a wallet that was never opened', async () => {
    const log = walletLog();
    const t = await cases.freshTables();
    const movement = log.find((e) => e.event.type === 'FundsFrozen')!;
    await expect(cases.pool().query(inlineStatements(walletsProjection.applyAll!([movement], t)))).rejects.toThrow(/null value/);
    expect((await rows(t)).rm_statement_lines).toHaveLength(0);
  });
});
