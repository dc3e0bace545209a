import { formatAmount } from '../../src/shared/money';
import { WALLET_SNAPSHOT_INTERVAL } from '../../projections/wallets.projection';
import { formatPosition, RecordedEvent } from '../../src/ledger/ports/event-store.port';
import { walletStream } from '../../src/ledger/streams';
import { adminClient } from '../back-office/admin-client';
import { handFold } from '../support/expectations';
import { TestMerchant } from '../support/merchant-fixture';
import { RunningService } from '../support/service';
import { auditedWallet } from '../support/wallet-history';

const VERIFY = '/admin/v1/audit/verify';

const reference = (e: RecordedEvent) => ({ stream: e.streamId, revision: Number(e.revision), type: e.type, position: formatPosition(e.position) });
const minor = (amount: string) => amount.replace('.', '').replace(/^0+(?=\d)/, '');

describe('wallet snapshots: balance as of any moment from the nearest one, each checked by the verification', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };
  let events: RecordedEvent[];

  beforeAll(async () => {
    // More than two snapshot intervals (1,000 events each) of mixed movements.
    ({ service, teardown, merchant, admin, auditor } = await auditedWallet(1300, 'SN'));
    events = await service.store.readStream(walletStream(merchant.merchantId));
  });
  afterAll(async () => teardown());

  const balance = (query: string) => admin('GET', `/admin/v1/wallets/${merchant.merchantId}/balance?${query}`, undefined, auditor);
  const verify = (body: unknown) => admin('POST', VERIFY, body, auditor);
  const snapshotRows = async () =>
    (
      await service.pool.query<{ revision: string; c: string; p: string; event_hash: string; balance: string; frozen: string }>(
        `select revision::text, position_commit::text as c, position_prepare::text as p, event_hash, balance::text, frozen::text
         from rm_wallet_snapshots s where merchant_id = $1 order by s.revision`,
        [merchant.merchantId],
      )
    ).rows;

  it('the projection writes one after every 1,000th event, naming that event and the wallet after it', async () => {
    expect(events.length).toBeGreaterThan(2 * WALLET_SNAPSHOT_INTERVAL + 10);
    const rows = await snapshotRows();
    expect(rows.map((r) => Number(r.revision))).toEqual([999, 1999]);
    for (const row of rows) {
      const event = events[Number(row.revision)];
      expect(`${row.c}/${row.p}`).toBe(formatPosition(event.position));
      expect(row.event_hash).toBe(event.metadata.hash);
      const folded = handFold(events.slice(0, Number(row.revision) + 1));
      expect({ balance: row.balance, frozen: row.frozen }).toEqual({ balance: minor(folded.balance), frozen: minor(folded.frozen_balance) });
    }
  });

  it('balance as of positions and instants at and around the snapshots equals a hand fold, and a full replay', async () => {
    const last = events.length - 1;
    for (const k of [0, 1, 500, 998, 999, 1000, 1001, 1998, 1999, 2000, 2001, last]) {
      const event = events[k];
      const snapshot = k >= 1999 ? 1999 : k >= 999 ? 999 : null;
      const byPosition = await balance(`position=${formatPosition(event.position)}`);
      expect({ k, ...byPosition.body.data }).toMatchObject({
        k,
        ...handFold(events.slice(0, k + 1)),
        events_applied: k + 1,
        last_revision: k,
        last_position: formatPosition(event.position),
        from_snapshot: snapshot === null ? null : { revision: snapshot, position: formatPosition(events[snapshot].position) },
      });
      const full = await balance(`position=${formatPosition(event.position)}&replay=full`);
      expect({ k, ...full.body.data, from_snapshot: 'n/a' }).toEqual({ k, ...byPosition.body.data, from_snapshot: 'n/a' });
      expect(full.body.data.from_snapshot).toBeNull();

      // Recorded times are to the millisecond, so an instant takes in every event recorded within it.
      for (const at of [event.createdAt, new Date(event.createdAt.getTime() - 1)]) {
        const upTo = events.filter((e) => e.createdAt <= at);
        const byInstant = await balance(`at=${encodeURIComponent(at.toISOString())}`);
        expect({ k, at, ...byInstant.body.data }).toMatchObject({ k, at, ...handFold(upTo), events_applied: upTo.length });
      }
    }
  });

  it('a snapshot altered by hand is named by every verification that covers it, and a full replay still tells the truth', async () => {
    const revision = 999;
    const [before] = (await snapshotRows()).filter((r) => Number(r.revision) === revision);
    await service.pool.query('update rm_wallet_snapshots set balance = balance + 1 where merchant_id = $1 and revision = $2', [merchant.merchantId, revision]);
    try {
      const expected = {
        table: 'rm_wallet_snapshots',
        key: { merchant_id: merchant.merchantId, revision },
        column: 'balance',
        expected: formatAmount(BigInt(before.balance)),
        actual: formatAmount(BigInt(before.balance) + 1n),
        explained_by: reference(events[revision]),
      };
      for (const body of [{}, { merchant_id: merchant.merchantId }, { merchant_id: merchant.merchantId, scope: 'wallet' }]) {
        const reply = await verify(body);
        expect({ body, clean: reply.body.data.clean, differences: reply.body.data.differences }).toEqual({ body, clean: false, differences: [expected] });
      }
      const at = formatPosition(events[1500].position);
      expect((await balance(`position=${at}&replay=full`)).body.data).toMatchObject(handFold(events.slice(0, 1501)));
    } finally {
      await service.pool.query('update rm_wallet_snapshots set balance = balance - 1 where merchant_id = $1 and revision = $2', [
        merchant.merchantId,
        revision,
      ]);
    }
    expect((await verify({ merchant_id: merchant.merchantId, scope: 'wallet' })).body.data.clean).toBe(true);
  });

  it('a snapshot that does not match its event in the log is not used, and is named', async () => {
    await service.pool.query(`update rm_wallet_snapshots set event_hash = repeat('0', 64) where merchant_id = $1 and revision = 1999`, [merchant.merchantId]);
    try {
      const at = formatPosition(events[2100].position);
      expect((await balance(`position=${at}`)).body.data).toMatchObject({
        ...handFold(events.slice(0, 2101)),
        from_snapshot: null,
      });
      const reply = await verify({ merchant_id: merchant.merchantId, scope: 'wallet' });
      expect(reply.body.data.differences).toEqual([
        expect.objectContaining({
          table: 'rm_wallet_snapshots',
          key: { merchant_id: merchant.merchantId, revision: 1999 },
          column: 'event_hash',
          expected: events[1999].metadata.hash,
        }),
      ]);
    } finally {
      await service.pool.query(`update rm_wallet_snapshots set event_hash = $2 where merchant_id = $1 and revision = 1999`, [
        merchant.merchantId,
        events[1999].metadata.hash,
      ]);
    }
  });

  it('a missing snapshot is named and costs balance as of only speed; a right one off the interval is accepted; one past the log is stray', async () => {
    const [saved] = (await snapshotRows()).filter((r) => Number(r.revision) === 1999);
    await service.pool.query('delete from rm_wallet_snapshots where merchant_id = $1 and revision = 1999', [merchant.merchantId]);
    // One at revision 1500 with the right amounts, as a projection with another interval would have written it.
    const folded = handFold(events.slice(0, 1501));
    const insert = (revision: number, event: RecordedEvent, amounts: { balance: string; frozen: string }) =>
      service.pool.query(
        `insert into rm_wallet_snapshots (merchant_id, revision, position_commit, position_prepare, recorded_at, event_hash, balance, frozen)
         values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          merchant.merchantId,
          revision,
          event.position.commit.toString(),
          event.position.prepare.toString(),
          event.createdAt,
          event.metadata.hash,
          amounts.balance,
          amounts.frozen,
        ],
      );
    await insert(1500, events[1500], { balance: minor(folded.balance), frozen: minor(folded.frozen_balance) });
    await insert(events.length + 10, events[events.length - 1], { balance: '1', frozen: '0' });
    try {
      const at = formatPosition(events[2100].position);
      expect((await balance(`position=${at}`)).body.data).toMatchObject({
        ...handFold(events.slice(0, 2101)),
        from_snapshot: { revision: 1500, position: formatPosition(events[1500].position) },
      });
      const reply = await verify({ merchant_id: merchant.merchantId, scope: 'wallet' });
      expect(reply.body.data.differences).toEqual([
        {
          table: 'rm_wallet_snapshots',
          key: { merchant_id: merchant.merchantId, revision: 1999 },
          column: null,
          expected: expect.objectContaining({
            balance: formatAmount(BigInt(saved.balance)),
            frozen: formatAmount(BigInt(saved.frozen)),
            event_hash: saved.event_hash,
          }),
          actual: null,
          explained_by: reference(events[1999]),
        },
        {
          table: 'rm_wallet_snapshots',
          key: { merchant_id: merchant.merchantId, revision: events.length + 10 },
          column: null,
          expected: null,
          actual: expect.objectContaining({ balance: '0.01', frozen: '0.00' }),
          explained_by: null,
        },
      ]);
    } finally {
      await service.pool.query('delete from rm_wallet_snapshots where merchant_id = $1 and revision not in (999)', [merchant.merchantId]);
      await insert(1999, events[1999], { balance: saved.balance, frozen: saved.frozen });
    }
    expect((await verify({})).body.data.clean).toBe(true);
  });

  it('refuses a bad replay choice', async () => {
    expect((await balance(`position=${formatPosition(events[3].position)}&replay=some`)).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'replay' });
  });
});
