import { randomBytes } from 'node:crypto';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { startPrivatePostgres, PrivatePostgres } from '../support/private-postgres';
import { RunningService, startService } from '../support/service';

const REQUESTS = 40;

/**
 * A nonce is accepted once, also across a crash of the database server: it
 * must be durable before the request it admitted is answered.
 */
describe('nonces survive a database crash', () => {
  let postgres: PrivatePostgres;
  let service: RunningService;
  let merchant: TestMerchant;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    service = await startService({ env: { DATABASE_URL: postgres.url } });
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => {
    await service?.stop();
    await postgres?.stop();
  });

  it('requests answered just before the crash are refused as replays after it', async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const calls = Array.from({ length: REQUESTS }, () => ({ path: '/api/v2/balance', timestamp, nonce: randomBytes(12).toString('hex') }));
    for (const call of calls) expect((await signedFetch(service, merchant, call)).status).toBe(200);
    await postgres.crash();
    await postgres.start();

    const replays: string[] = [];
    for (const call of calls) {
      let reply = await signedFetch(service, merchant, call);
      // The pools notice the restart on first use: a 500 gives the nonce back, so try again.
      for (let i = 0; reply.status === 500 && i < 50; i++) {
        await new Promise((r) => setTimeout(r, 100));
        reply = await signedFetch(service, merchant, call);
      }
      replays.push(`${reply.status} ${reply.body.code}`);
    }
    expect(replays).toEqual(calls.map(() => '401 NONCE_REUSED'));
  });
});
