import { randomBytes } from 'node:crypto';
import { FULFILMENT_ENV_EVERY_ORDER_ENDS, awaitFinal } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const SUBMIT = '/api/v2/topup/submit';
const MAX_WAITING = 3;
/** The guard reads the queue at most once a second, on a submit's arrival: two readings apart. */
const NEXT_READING_MS = 1_100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const submitBody = (outTradeNo: string) => JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'plain-10', account_id: '12345678', account_fields: {} });

/**
 * The backlog policy across two instances of one deployment: A takes orders
 * with fulfilment off, so they wait; once more than INTAKE_MAX_WAITING wait,
 * A refuses submits with 503 SERVICE_BUSY, freezing nothing and giving the
 * nonce back; B, with fulfilment on, works the queue off, and A takes the very
 * request it refused.
 */
describe('backlog policy: submits are refused while orders wait for fulfilment beyond the limits, and taken again once they do not', () => {
  let db: TestDatabase;
  let a: RunningService;
  let b: RunningService | undefined;
  let merchant: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startService(db, { FULFILMENT_CONCURRENCY: '0', INTAKE_MAX_WAITING: String(MAX_WAITING), INTAKE_MAX_WAIT_S: '0' });
    merchant = await provisionMerchant(a, { deposit: 100_000n });
  }, 60_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await db?.drop();
  });

  const balance = async () => (await signedFetch(a, merchant, { path: '/api/v2/balance' })).body.data;
  const ready = async () => ((await (await fetch(`${a.url}/health/ready`)).json()) as any).data;
  const metric = async (name: string) => {
    const text = await (await fetch(`${a.url}/metrics`)).text();
    return Number(
      text
        .split('\n')
        .find((line) => line.startsWith(`${name} `))
        ?.split(' ')[1],
    );
  };

  it('takes orders while the queue is within the limit, then refuses with 503 SERVICE_BUSY and Retry-After, freezing nothing', async () => {
    const accepted: string[] = [];
    for (let i = 0; i <= MAX_WAITING; i++) {
      const reply = await signedFetch(a, merchant, { path: SUBMIT, body: submitBody(`wait-${i}`) });
      expect(reply.status).toBe(202);
      accepted.push(reply.body.data.order_no);
    }
    // The reading that sees the queue over the limit, then the submit judged on it.
    await sleep(NEXT_READING_MS);
    await signedFetch(a, merchant, { path: SUBMIT, body: submitBody('wait-extra') });
    await sleep(NEXT_READING_MS);
    const before = await balance();
    const refused = await signedFetch(a, merchant, { path: SUBMIT, body: submitBody('refused-1') });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ success: false, code: 'SERVICE_BUSY' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await balance()).toEqual(before);
    expect((await signedFetch(a, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ out_trade_no: 'refused-1' }) })).body.code).toBe(
      'ORDER_NOT_FOUND',
    );
  });

  it('shows the refusal in readiness (still ready: every instance shares the queue) and in the metrics', async () => {
    const reply = await ready();
    expect(reply.status).toBe('ready');
    expect(reply.checks.intake.detail).toMatchObject({ shedding: true, max_waiting: MAX_WAITING });
    expect(reply.checks.intake.detail.waiting).toBeGreaterThan(MAX_WAITING);
    expect(await metric('topup_intake_shedding')).toBe(1);
    expect(await metric('topup_intake_waiting_orders')).toBeGreaterThan(MAX_WAITING);
  });

  it('gives the nonce back: the same signed request, sent again unchanged, is judged again rather than refused as a replay', async () => {
    const call = {
      path: SUBMIT,
      body: submitBody('retried-unchanged'),
      nonce: randomBytes(12).toString('hex'),
      timestamp: String(Math.floor(Date.now() / 1000)),
    };
    expect((await signedFetch(a, merchant, call)).body.code).toBe('SERVICE_BUSY');
    expect((await signedFetch(a, merchant, call)).body.code).toBe('SERVICE_BUSY');

    // Another instance of the deployment, with fulfilment on, works the queue off.
    b = await startService(db, { ...FULFILMENT_ENV_EVERY_ORDER_ENDS, INTAKE_MAX_WAITING: String(MAX_WAITING), INTAKE_MAX_WAIT_S: '0' });
    const deadline = Date.now() + 30_000;
    let reply = await signedFetch(a, merchant, call);
    while (reply.status === 503 && Date.now() < deadline) {
      await sleep(200);
      reply = await signedFetch(a, merchant, call);
    }
    expect(reply.status).toBe(202);
    expect(reply.body.code).toBe('ACCEPTED');
    await awaitFinal(a, merchant, reply.body.data.order_no, 30_000);
    expect((await ready()).checks.intake.detail.shedding).toBe(false);
  }, 60_000);
});
