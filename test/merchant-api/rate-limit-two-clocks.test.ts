import { adminClient } from '../back-office/admin-client';
import { ChildService, clockAhead, spawnService } from '../support/child-service';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { intoSecond } from '../support/until';

const LIMIT = 5;
const AHEAD_MS = 900;

/**
 * Two instances whose clocks differ by 900 ms, as two machines' may: for
 * most of each second they stamp a request with different seconds. A
 * merchant's requests through both, alternating, must still meet its rate
 * limit then.
 */
describe('the rate limit through two instances whose clocks straddle a second', () => {
  let db: TestDatabase;
  let behind: RunningService;
  let ahead: ChildService;

  beforeAll(async () => {
    db = await createTestDatabase();
    behind = await startService(db);
    ahead = await spawnService(db, clockAhead(AHEAD_MS));
  }, 60_000);
  afterAll(async () => {
    await ahead?.kill('SIGTERM');
    await behind?.app.close();
    await db?.drop();
  });

  async function newMerchant(): Promise<TestMerchant> {
    const created = await adminClient(behind.url).createMerchant({ name: 'Two clocks', rate_limit_per_second: LIMIT });
    return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  }

  /** Twelve requests alternating between the instances, the one ahead first, all while their seconds differ; undefined when they did not fit. */
  async function alternateWithinTheStraddle(merchant: TestMerchant): Promise<number[] | undefined> {
    // This process's clock is the instance behind's: the seconds differ from 100 ms into each of its seconds.
    await intoSecond(1000 - AHEAD_MS + 20, 30);
    const second = Math.floor(Date.now() / 1000);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const service = i % 2 === 0 ? ahead : behind;
      statuses.push((await signedFetch(service, merchant, { path: '/api/v2/balance', timestamp: String(second) })).status);
    }
    return Math.floor(Date.now() / 1000) === second ? statuses : undefined;
  }

  it('admits the limit and refuses the rest with 429, as one instance would', async () => {
    let statuses: number[] | undefined;
    // A loaded machine may take longer than the 880 ms: then try again in another second.
    for (let attempt = 0; attempt < 5 && statuses === undefined; attempt++) {
      statuses = await alternateWithinTheStraddle(await newMerchant());
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), ...Array<number>(12 - LIMIT).fill(429)]);
  }, 60_000);
});
