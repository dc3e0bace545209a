import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ChildService, spawnService } from '../support/child-service';
import { provisionOverHttp, submitOverHttp } from '../support/http-provisioning';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';

const SLOTS = 4;
/** What the worker claims with SLOTS slots: a quarter more (jobsClaimedAtOnce). */
const CLAIMED_AT_ONCE = 5;
const ORDERS = 20;
/** The upstream answers each top-up this long after it arrives. */
const ANSWER_MS = 800;

/** An upstream that delivers every top-up, and counts how many it holds at once. */
class CountingUpstream {
  atOnce = 0;
  peak = 0;
  readonly received: string[] = [];
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.received.push(String(request.headers['idempotency-key']));
      this.peak = Math.max(this.peak, ++this.atOnce);
      setTimeout(() => {
        this.atOnce--;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ status: 'delivered', reference: `REF-${this.received.length}` }));
      }, ANSWER_MS);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * FULFILMENT_CONCURRENCY bounds the top-ups at the upstream at once, and
 * only those: the worker claims a quarter more jobs, which read their orders
 * and wait for a slot while the others are at the upstream.
 */
describe('the upstream slots', () => {
  let db: TestDatabase;
  let upstream: CountingUpstream;
  let service: ChildService;

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = new CountingUpstream();
    const url = await upstream.start();
    service = await spawnService(db, { UPSTREAM_URL: url, FULFILMENT_CONCURRENCY: String(SLOTS), UPSTREAM_TIMEOUT_MS: '5000' });
  });
  afterAll(async () => {
    await service?.kill('SIGKILL');
    await upstream?.stop();
    await db?.drop();
  });

  it('never has more top-ups at the upstream than its slots, and claims a quarter more jobs meanwhile', async () => {
    const merchant = await provisionOverHttp(service.url, '1000.00');
    for (let n = 0; n < ORDERS; n++) {
      const reply = await submitOverHttp(service, merchant, `SLOT-${n}-${randomBytes(3).toString('hex')}`, String(55_500_000 + n));
      expect(reply.status).toBe(202);
    }

    // While the upstream holds its four, a fifth job is leased: read, and waiting for a slot.
    const leasedWhileFull = await until(
      async () => {
        const { rows } = await db.pool.query<{ leased: number }>(
          'select count(*)::int as leased from fulfilment_jobs where leased_by is not null and lease_until > now()',
        );
        return { leased: rows[0].leased, atTheUpstream: upstream.atOnce };
      },
      (seen) => seen.leased === CLAIMED_AT_ONCE && seen.atTheUpstream === SLOTS,
    );
    expect(leasedWhileFull).toEqual({ leased: CLAIMED_AT_ONCE, atTheUpstream: SLOTS });

    const stages = await until(
      async () => (await db.pool.query<{ stage: string; n: number }>('select stage, count(*)::int as n from rm_orders group by stage')).rows,
      (rows) => rows.length === 1 && rows[0].stage === 'succeeded' && rows[0].n === ORDERS,
      60_000,
    );
    expect(stages).toEqual([{ stage: 'succeeded', n: ORDERS }]);
    // Every order sent once, never more than the slots at once.
    expect(new Set(upstream.received).size).toBe(ORDERS);
    expect(upstream.received).toHaveLength(ORDERS);
    expect(upstream.peak).toBe(SLOTS);
  });
});
