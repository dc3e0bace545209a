import { formatAmount } from '../../src/shared/money';
import { formatPosition, RecordedEvent } from '../../src/ledger/ports/event-store.port';
import { AdjustWallet } from '../../src/ledger/commands/adjust-wallet/adjust-wallet.command';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { ResolveOrder } from '../../src/ledger/commands/resolve-order/resolve-order.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { walletStream } from '../../src/ledger/streams';
import { adminClient } from '../back-office/admin-client';
import { openWallet, orderInput } from '../support/fixtures';
import { RunningService, serviceOnFreshDatabase } from '../support/service';
import { readSettledLog } from '../support/settled-log';

const VERIFY = '/admin/v1/audit/verify';

const reference = (e: RecordedEvent) => ({ stream: e.streamId, revision: Number(e.revision), type: e.type, position: formatPosition(e.position) });

describe('POST /admin/v1/audit/verify: the read models against a replay of the log', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };
  let merchant: string;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    admin = adminClient(service.url);
    auditor = await admin.createStaff('auditor');
    merchant = await openWallet(service.commands, 20_000n);
    const bystander = await openWallet(service.commands, 1_000n);
    // A few hundred mixed movements: deposits, freezes, deductions, releases, unknown results resolved either way, adjustments.
    for (let i = 0; i < 140; i++) {
      if (i % 25 === 0) await service.commands.execute(new DepositFunds(merchant, `top-up-${i}`, 3_000n, 'ops'));
      const result = await service.commands.execute(new SubmitOrder(orderInput(merchant, `V-${i}`, { amount: BigInt(90 + (i % 60)) })));
      if (result.outcome !== 'accepted') continue;
      const orderNo = result.order.order.orderNo;
      if (i % 5 === 0) await service.commands.execute(new SettleOrder(orderNo));
      if (i % 35 === 0) {
        // A final order corrected by staff: a wallet event outside any hold, on the statement and in the chain.
        const adjustment = { reference: `fix-${i}`, direction: 'credit', amount: 30n, reason: 'REPORT_SAYS_FAILED', note: 'report', orderNo } as const;
        await service.commands.execute(new AdjustWallet(merchant, adjustment, 'finance'));
      }
      if (i % 5 === 1) await service.commands.execute(new ReleaseFunds(orderNo, 'UPSTREAM_REJECTED', 'rejected'));
      if (i % 5 === 2 || i % 5 === 3) {
        await service.commands.execute(new MarkResultUnknown(orderNo, 'timeout'));
        await service.commands.execute(new ResolveOrder(orderNo, i % 5 === 2 ? 'success' : 'failed', 'staff-1', 'checked upstream'));
      }
    }
    // Refused for want of money: an order row without any movement.
    expect((await service.commands.execute(new SubmitOrder(orderInput(bystander, 'too-big', { amount: 5_000n })))).outcome).toBe('refused');
    await service.catchUp();
  });
  afterAll(async () => teardown());

  const verify = (body: unknown = {}, token = auditor.token) => admin('POST', VERIFY, body, { token });

  it('reports a clean ledger with the events it checked and where it stopped', async () => {
    const { events, position } = await readSettledLog(service.store);
    const ledgerEvents = events.filter((e) => /^(wallet|order)-/.test(e.streamId)).length;
    expect(ledgerEvents).toBeGreaterThan(500);

    const whole = await verify();
    expect(whole.status).toBe(200);
    expect(whole.body.data).toEqual({
      clean: true,
      merchant_id: null,
      events_checked: ledgerEvents,
      last_position: formatPosition(position),
      projection_positions: { orders: expect.stringMatching(/^\d+\/\d+$/), wallets: expect.stringMatching(/^\d+\/\d+$/) },
      differences: [],
      differences_total: 0,
    });

    const one = await verify({ merchant_id: merchant });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ clean: true, merchant_id: merchant, differences: [] });
    expect(one.body.data.events_checked).toBeGreaterThan(400);
    expect(one.body.data.events_checked).toBeLessThan(ledgerEvents);
  });

  it('names a hand-altered wallet balance, with the last event of that wallet', async () => {
    const { rows } = await service.pool.query<{ balance: string }>('select balance::text from rm_wallets where merchant_id = $1', [merchant]);
    const walletEvents = await service.store.readStream(walletStream(merchant));
    await service.pool.query('update rm_wallets set balance = balance + 1 where merchant_id = $1', [merchant]);
    try {
      for (const body of [{}, { merchant_id: merchant }]) {
        const reply = await verify(body);
        expect(reply.status).toBe(200);
        expect(reply.body.data.clean).toBe(false);
        expect(reply.body.data.differences_total).toBe(1);
        expect(reply.body.data.differences).toEqual([
          {
            table: 'rm_wallets',
            key: { merchant_id: merchant },
            column: 'balance',
            expected: formatAmount(BigInt(rows[0].balance)),
            actual: formatAmount(BigInt(rows[0].balance) + 1n),
            explained_by: reference(walletEvents[walletEvents.length - 1]),
          },
        ]);
      }
    } finally {
      await service.pool.query('update rm_wallets set balance = balance - 1 where merchant_id = $1', [merchant]);
    }
  });

  it('names an altered statement line with the event at its revision, and rows no event explains', async () => {
    const walletEvents = await service.store.readStream(walletStream(merchant));
    const event = walletEvents.find((e) => e.type === 'FrozenFundsDeducted')!;
    const hold = walletEvents.find(
      (e) => e.type === 'FundsFrozen' && !walletEvents.some((c) => c.type !== 'FundsFrozen' && c.data.orderNo === e.data.orderNo),
    )!;
    const holdRow = [merchant, hold.data.orderNo, hold.data.attempt];
    await service.pool.query('update rm_statement_lines set amount = amount + 7 where merchant_id = $1 and revision = $2', [
      merchant,
      event.revision.toString(),
    ]);
    await service.pool.query('delete from rm_wallet_holds where merchant_id = $1 and order_no = $2 and attempt = $3', holdRow);
    await service.pool.query(
      `insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, updated_at)
       values ('TGHOST', $1, 'ghost', 1, 'accepted', 'mlbb-86', '1', '{}', 100, 'USD', now(), now())`,
      [merchant],
    );
    try {
      const reply = await verify({ merchant_id: merchant });
      expect(reply.body.data.differences).toEqual([
        {
          table: 'rm_wallet_holds',
          key: { merchant_id: merchant, order_no: hold.data.orderNo, attempt: hold.data.attempt },
          column: null,
          expected: { amount: formatAmount(BigInt(hold.data.amount as string)) },
          actual: null,
          explained_by: reference(hold),
        },
        {
          table: 'rm_statement_lines',
          key: { merchant_id: merchant, revision: Number(event.revision) },
          column: 'amount',
          expected: formatAmount(BigInt(event.data.amount as string)),
          actual: formatAmount(BigInt(event.data.amount as string) + 7n),
          explained_by: reference(event),
        },
        {
          table: 'rm_orders',
          key: { order_no: 'TGHOST' },
          column: null,
          expected: null,
          actual: { merchant_id: merchant, stage: 'accepted', attempt: 1, amount: '1.00', fail_code: null },
          explained_by: null,
        },
      ]);
    } finally {
      await service.pool.query('update rm_statement_lines set amount = amount - 7 where merchant_id = $1 and revision = $2', [
        merchant,
        event.revision.toString(),
      ]);
      await service.pool.query(`insert into rm_wallet_holds (merchant_id, order_no, attempt, amount, frozen_at) values ($1, $2, $3, $4, now())`, [
        ...holdRow,
        hold.data.amount,
      ]);
      await service.pool.query(`delete from rm_orders where order_no = 'TGHOST'`);
    }
    expect((await verify()).body.data.clean).toBe(true);
  });

  it('does not count events the projections have not applied yet', async () => {
    await service.projections.stop();
    try {
      const before = await verify();
      await service.commands.execute(new DepositFunds(merchant, 'while-projections-stopped', 500n, 'ops'));
      const after = await verify();
      expect(after.body.data).toEqual(before.body.data);
      expect(after.body.data.clean).toBe(true);
    } finally {
      await service.projections.start();
    }
    await service.catchUp();
    const caughtUp = await verify();
    expect(caughtUp.body.data.clean).toBe(true);
  });

  it('is for auditors and admins: a reconciler gets 403, and bad input its error', async () => {
    const reconciler = await admin.createStaff('reconciler');
    expect((await verify({}, reconciler.token)).status).toBe(403);
    expect((await admin('POST', VERIFY, {}, { token: null })).status).toBe(401);
    expect((await admin('POST', VERIFY, { merchant_id: merchant })).status).toBe(200);
    expect((await verify({ merchant_id: 'no such one' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'merchant_id' });
    expect((await verify({ merchant_id: 'm-unknown' })).status).toBe(404);
    expect((await verify({ merchant: merchant })).status).toBe(422);
  });
});
