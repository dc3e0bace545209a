import { migrate } from '../../src/infrastructure/postgres/migrations';
import { merchantApiMigrations } from '../../src/merchant-api/gateway/replay-guard.migrations';
import { provisioningMigrations } from '../../src/merchant-directory/provisioning.migrations';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * merchant_admit, the statement every signed request passes: the nonce
 * consumed and the request counted in its merchant's one-second window.
 */
describe('admission (merchant_admit)', () => {
  let db: TestDatabase;
  const window = 1_800_000_000;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, [...provisioningMigrations, ...merchantApiMigrations]);
  });
  afterAll(() => db.drop());

  /** Merchant `${p}-a` has counted 3 in this window, `${p}-b` 9 in an earlier one and used nonce "used"; `${p}-c` has no window yet. */
  async function merchants(p: string) {
    await db.pool.query(
      `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, rate_limit_per_second, created_by, updated_by)
       select m, m, 'CNY', m, '\\x00', 100, 'test', 'test' from unnest($1::text[]) as m`,
      [[`${p}-a`, `${p}-b`]],
    );
    await db.pool.query('insert into merchant_rate_windows (merchant_id, window_start, hits) values ($1, $3, 3), ($2, $3 - 5, 9)', [
      `${p}-a`,
      `${p}-b`,
      window,
    ]);
    await db.pool.query(`insert into merchant_nonces (merchant_id, nonce, expires_at) values ($1, 'used', now() + interval '5 minutes')`, [`${p}-b`]);
  }

  async function admit(p: string, requests: { m: string; n: string | null; w?: number; t?: string }[]) {
    const expiry = new Date(Date.now() + 300_000).toISOString();
    const { rows } = await db.pool.query<{ o_item: number; o_fresh: boolean; o_hits: number; o_version: string | null }>(
      'select o_item, o_fresh, o_hits, o_version from merchant_admit($1::jsonb)',
      [JSON.stringify(requests.map((r) => ({ m: `${p}-${r.m}`, n: r.n, e: r.n && expiry, w: r.w ?? window, t: r.t ?? null })))],
    );
    const versions = await db.pool.query<{ merchant_id: string; updated_at: string }>(
      'select merchant_id, updated_at::text from merchants where merchant_id like $1',
      [`${p}-%`],
    );
    const version = new Map(versions.rows.map((v) => [v.merchant_id, v.updated_at]));
    return {
      answers: rows.map((r) => ({
        item: r.o_item,
        fresh: r.o_fresh,
        hits: r.o_hits,
        versioned: r.o_version !== null && r.o_version === version.get(`${p}-${requests[r.o_item].m}`),
      })),
    };
  }

  const requests = [
    { m: 'a', n: 'one' },
    { m: 'a', n: 'two' },
    { m: 'b', n: 'three' },
    { m: 'a', n: 'one' },
    { m: 'c', n: null },
    { m: 'b', n: 'used' },
    { m: 'a', n: 'four' },
  ];
  const answers = [
    { item: 0, fresh: true, hits: 4, versioned: true },
    { item: 1, fresh: true, hits: 5, versioned: true },
    { item: 2, fresh: true, hits: 1, versioned: true },
    // The same nonce twice in one batch: fresh for its first request only.
    { item: 3, fresh: false, hits: 6, versioned: true },
    { item: 4, fresh: true, hits: 1, versioned: false },
    { item: 5, fresh: false, hits: 2, versioned: true },
    { item: 6, fresh: true, hits: 7, versioned: true },
  ];

  it('counts each request in its merchant window and consumes each nonce once, a nonce twice in the batch fresh for its first request only', async () => {
    await merchants('once');
    const { answers: got } = await admit('once', requests);
    expect(got).toEqual(answers);
  });

  it('starts a new count when a merchant crosses into the next second within the batch', async () => {
    await merchants('crossing');
    const { answers: got } = await admit('crossing', [...requests, { m: 'a', n: 'five', w: window + 1 }]);
    expect(got).toEqual([...answers, { item: 7, fresh: true, hits: 1, versioned: true }]);
    const { rows } = await db.pool.query('select window_start::int, hits from merchant_rate_windows where merchant_id = $1', ['crossing-a']);
    expect(rows).toEqual([{ window_start: window + 1, hits: 1 }]);
  });

  it('a request of the second before the window, admitted after it moved on, counts in the window and leaves it there', async () => {
    await merchants('late');
    // Another instance's clock a little ahead, or a batch that committed after a later one.
    const { answers: late } = await admit('late', [{ m: 'a', n: 'late', w: window - 1 }]);
    expect(late.map((a) => a.hits)).toEqual([4]);
    const { answers: current } = await admit('late', [{ m: 'a', n: 'current' }]);
    expect(current.map((a) => a.hits)).toEqual([5]);
    const { rows } = await db.pool.query('select window_start::int, hits from merchant_rate_windows where merchant_id = $1', ['late-a']);
    expect(rows).toEqual([{ window_start: window, hits: 5 }]);
  });

  it('a request two seconds older than the window starts its own, so that one clock far ahead holds no window ahead', async () => {
    await merchants('behind');
    const { answers: got } = await admit('behind', [{ m: 'a', n: 'behind', w: window - 2 }]);
    expect(got.map((a) => a.hits)).toEqual([1]);
    const { rows } = await db.pool.query('select window_start::int, hits from merchant_rate_windows where merchant_id = $1', ['behind-a']);
    expect(rows).toEqual([{ window_start: window - 2, hits: 1 }]);
  });

  it('a second batch in the same window goes on counting', async () => {
    await merchants('again');
    await admit('again', requests);
    const { answers: got } = await admit('again', [
      { m: 'a', n: 'six' },
      { m: 'a', n: 'one' },
      { m: 'c', n: 'seven' },
    ]);
    expect(got).toEqual([
      { item: 0, fresh: true, hits: 8, versioned: true },
      { item: 1, fresh: false, hits: 9, versioned: true },
      { item: 2, fresh: true, hits: 2, versioned: false },
    ]);
  });

  it('a batch sent again after its connection dropped: a nonce stored under the same token stays fresh, under another it is a replay', async () => {
    await merchants('resent');
    const first = await admit('resent', [
      { m: 'a', n: 'eight', t: '41' },
      { m: 'a', n: 'nine', t: '42' },
    ]);
    expect(first.answers.map((a) => a.fresh)).toEqual([true, true]);
    // The same admission again (its commit's answer was lost), beside a replay of the other nonce and a tokenless request.
    const again = await admit('resent', [
      { m: 'a', n: 'eight', t: '41' },
      { m: 'a', n: 'nine', t: '99' },
      { m: 'a', n: 'eight' },
    ]);
    expect(again.answers.map((a) => a.fresh)).toEqual([true, false, false]);
    const { rows } = await db.pool.query('select nonce, admission::text from merchant_nonces where merchant_id = $1 order by nonce', ['resent-a']);
    expect(rows).toEqual([
      { nonce: 'eight', admission: '41' },
      { nonce: 'nine', admission: '42' },
    ]);
  });
});
