import { randomBytes } from 'node:crypto';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { ChildService, clockAhead, spawnService } from '../support/child-service';
import { provisionOverHttp, submitOverHttp } from '../support/http-provisioning';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { sample, scrapeMetrics } from '../support/prometheus-text';

const HEARTBEAT_MS = 300;
/** Each order holds an upstream slot this long. */
const DELIVERY_MS = 4000;

interface Instance {
  instance: string;
  started_at: string;
  seen_at: string;
  clock_offset_ms: number | null;
  fulfilment: { slots: number; in_flight: number; held: number };
  callbacks: { slots: number };
}

/**
 * GET /admin/v1/status lists every running instance with its upstream slots,
 * from the rows each writes (service_instances): asked of one instance, it
 * shows the others too. A stopped instance removes its row; one killed
 * drops out of the list after three missed heartbeats.
 */
describe('the running instances on the status page', () => {
  let db: TestDatabase;
  let upstream: UpstreamSimulator;
  const started: ChildService[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startUpstreamSimulator({ deliveryDelayMs: DELIVERY_MS });
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.kill('SIGKILL')));
    await upstream.stop();
    await db.drop();
  });

  const start = async (fulfilmentSlots: number, callbackSlots: number, env: Record<string, string> = {}) => {
    const service = await spawnService(db, {
      UPSTREAM_URL: upstream.url,
      FULFILMENT_CONCURRENCY: String(fulfilmentSlots),
      CALLBACK_CONCURRENCY: String(callbackSlots),
      INSTANCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
      ...env,
    });
    started.push(service);
    return service;
  };

  /** The process's row in the list: instance ids name the pid (host/pid/tag). */
  const instanceOf = (list: Instance[], service: ChildService) => list.find((i) => i.instance.includes(`/${service.process.pid}/`));

  const instances = async (service: ChildService): Promise<Instance[]> => {
    const reply = await adminClient(service.url)('GET', '/admin/v1/status');
    expect(reply.status).toBe(200);
    return reply.body.data.instances;
  };

  it('shows each instance’s slots and the slots it holds, and forgets an instance that stops or dies', async () => {
    const [a, b] = await Promise.all([start(3, 0), start(5, 2)]);
    const merchant = await provisionOverHttp(a.url);

    // Asked of either instance, the list names both, oldest first.
    const listed = await until(
      () => instances(b),
      (list) => list.length === 2,
    );
    expect(listed.map((i) => [i.fulfilment.slots, i.callbacks.slots]).sort()).toEqual([
      [3, 0],
      [5, 2],
    ]);
    expect(listed.every((i) => i.instance.includes(`/${a.process.pid}/`) || i.instance.includes(`/${b.process.pid}/`))).toBe(true);
    const slotsOf = (list: Instance[], service: ChildService) => instanceOf(list, service)?.fulfilment;

    // Twelve orders fill both instances' eight slots for DELIVERY_MS each: each claims a quarter more
    // jobs than it has slots (4 and 7), and those wait for a slot.
    for (let n = 0; n < 12; n++) {
      const reply = await submitOverHttp(a, merchant, `INST-${n}-${randomBytes(3).toString('hex')}`, String(12_345_600 + n));
      expect(reply.status).toBe(202);
    }
    const full = await until(
      () => instances(a),
      (list) => slotsOf(list, a)?.in_flight === 3 && slotsOf(list, b)?.in_flight === 5,
      3000,
    );
    expect([slotsOf(full, a), slotsOf(full, b)]).toMatchObject([
      { slots: 3, in_flight: 3 },
      { slots: 5, in_flight: 5 },
    ]);
    // Once the upstream answers, the slots' time shows in the mean held over a heartbeat.
    const answered = await until(
      () => instances(a),
      (list) => (slotsOf(list, a)?.held ?? 0) > 0 && (slotsOf(list, b)?.held ?? 0) > 0,
      DELIVERY_MS + 5000,
    );
    expect(slotsOf(answered, a)?.held).toBeGreaterThan(0);
    expect(slotsOf(answered, a)?.held).toBeLessThanOrEqual(3);
    expect(slotsOf(answered, b)?.held).toBeGreaterThan(0);
    expect(slotsOf(answered, b)?.held).toBeLessThanOrEqual(5);

    // A stopped instance removes its row at once; a killed one drops out of the list after three heartbeats.
    await b.kill('SIGTERM');
    const rows = await db.pool.query<{ instance_id: string }>('select instance_id from service_instances');
    expect(rows.rows.map((r) => r.instance_id).filter((id) => id.includes(`/${b.process.pid}/`))).toEqual([]);
    expect((await instances(a)).map((i) => i.instance)).toEqual([expect.stringContaining(`/${a.process.pid}/`)]);

    const c = await start(1, 1);
    await until(
      () => instances(a),
      (list) => list.length === 2,
    );
    await c.kill('SIGKILL');
    const left = await until(
      () => instances(a),
      (list) => list.length === 1,
      5 * HEARTBEAT_MS + 2000,
    );
    expect(left.map((i) => i.instance)).toEqual([expect.stringContaining(`/${a.process.pid}/`)]);
  });

  it('shows how far each instance’s clock is from the database’s, and one more than a second off says so in its log and metrics', async () => {
    const [onTime, ahead] = await Promise.all([start(1, 1), start(1, 1, clockAhead(1500))]);
    const offsetOf = (list: Instance[], service: ChildService) => instanceOf(list, service)?.clock_offset_ms;
    const listed = await until(
      () => instances(onTime),
      (list) => typeof offsetOf(list, ahead) === 'number' && typeof offsetOf(list, onTime) === 'number',
    );
    // Measured as the row reaches the database: the statement's way there (well under 100 ms here) is in it.
    expect(Math.abs(offsetOf(listed, onTime)!)).toBeLessThan(100);
    expect(offsetOf(listed, ahead)).toBeGreaterThan(1400);
    expect(offsetOf(listed, ahead)).toBeLessThan(1600);

    expect(sample(await scrapeMetrics(ahead.url), 'topup_clock_offset_seconds')).toBeGreaterThan(1.4);
    expect(Math.abs(sample(await scrapeMetrics(onTime.url), 'topup_clock_offset_seconds'))).toBeLessThan(0.1);
    expect(ahead.output()).toContain("this instance's clock is 1.5 s ahead of the database's");
    expect(onTime.output()).not.toContain("this instance's clock is");
  });
});
