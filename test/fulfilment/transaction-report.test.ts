import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpUpstream } from '../../src/fulfilment/upstream/http-upstream';
import { MAX_REPORT_BYTES, TopUpRequest, UpstreamReportError } from '../../src/fulfilment/upstream/upstream.port';
import { MemorySimulatorStore, PostgresSimulatorStore, SimulatorStore } from '../../src/fulfilment/simulator/simulator-store';
import { simulatorMigrations } from '../../src/fulfilment/simulator/simulator-store.migrations';
import { startUpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const topUp = (orderNo: string, accountId: string, amount = '1.20', currency = 'USD'): TopUpRequest => ({
  orderNo,
  skuId: 'sku-1',
  route: 'default',
  accountId,
  accountFields: {},
  amount,
  currency,
});

/** The report's lines as objects, keyed by its header. */
function rowsOf(csv: string): Record<string, string>[] {
  const [header, ...lines] = csv.trimEnd().split('\r\n');
  const columns = header.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [columns[i], cell])));
}

/**
 * The upstream's transaction report (docs/upstream-protocol.md): the
 * simulator lists every top-up whose result became final in the window, from
 * what it recorded, with either store; the HTTP adapter fetches it bounded in
 * size and time, and says clearly why when it cannot.
 */
describe('the transaction report', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, simulatorMigrations);
  });
  afterAll(() => db.drop());

  describe.each<[string, () => SimulatorStore]>([
    ['in memory', () => new MemorySimulatorStore()],
    ['in Postgres', () => new PostgresSimulatorStore(db.pool)],
  ])('from the simulator, its orders %s', (_name, storeOf) => {
    it('lists delivered and failed top-ups by completion in [from, to), with the amount and currency received, never a pending one', async () => {
      const tag = `${Date.now()}${Math.floor(Math.random() * 1000)}`;
      const simulator = await startUpstreamSimulator({ deliveryDelayMs: 1200, failureDelayMs: 1000, store: storeOf() });
      try {
        // A short timeout: the slow delivery and the slow refusal time out, as they do for the service.
        const upstream = new HttpUpstream(simulator.url, { timeoutMs: 100, connectTimeoutMs: 300 });
        const start = new Date();
        const sent = await Promise.all([
          upstream.topUp(topUp(`D${tag}`, '12345678', '1.20', 'USD')),
          upstream.topUp(topUp(`F${tag}`, '1000', '25.00', 'EUR')),
          upstream.topUp(topUp(`R${tag}`, '1001', '3.05', 'USD')),
          upstream.topUp(topUp(`P${tag}`, '1999')),
        ]);
        expect(sent.map((o) => o.kind)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
        // Before the results are ready (a second away: long enough for a loaded machine), nothing is complete.
        expect(rowsOf((await upstream.transactionReport(start, new Date(Date.now() + 60_000))).toString())).toEqual([]);
        await new Promise((r) => setTimeout(r, 1300));
        const report = (await upstream.transactionReport(start, new Date())).toString();
        expect(report.startsWith('order_no,status,amount,currency,reference,completed_at\r\n')).toBe(true);
        const rows = rowsOf(report);
        // The refusals were ready first (150 ms), then the delivery (300 ms).
        expect(
          rows
            .map((r) => r.order_no)
            .slice(0, 2)
            .sort(),
        ).toEqual([`F${tag}`, `R${tag}`]);
        expect(rows.map((r) => r.order_no)[2]).toBe(`D${tag}`);
        expect(rows.map((r) => r.completed_at)).toEqual(rows.map((r) => r.completed_at).sort());
        expect(rows.find((r) => r.order_no === `D${tag}`)).toEqual({
          order_no: `D${tag}`,
          status: 'delivered',
          amount: '1.20',
          currency: 'USD',
          reference: `SIM-D${tag}`,
          completed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
        });
        expect(rows.find((r) => r.order_no === `F${tag}`)).toMatchObject({ status: 'failed', amount: '25.00', currency: 'EUR', reference: '' });
        const completed = Date.parse(rows.find((r) => r.order_no === `D${tag}`)!.completed_at);
        expect(completed - start.getTime()).toBeGreaterThanOrEqual(290);
        // [from, to): a window ending at the completion leaves it out; one starting there has it.
        const before = rowsOf((await upstream.transactionReport(start, new Date(completed))).toString());
        expect(before.map((r) => r.order_no)).not.toContain(`D${tag}`);
        const from = rowsOf((await upstream.transactionReport(new Date(completed), new Date())).toString());
        expect(from.map((r) => r.order_no)).toContain(`D${tag}`);
        // The status endpoint agrees, and 999 stays pending.
        expect(await upstream.status(`F${tag}`)).toMatchObject({ kind: 'refused', failCode: 'INVALID_ACCOUNT' });
        expect(await upstream.status(`P${tag}`)).toEqual({ kind: 'pending' });
      } finally {
        await simulator.stop();
      }
    });
  });

  it('the simulator refuses a window without instants or backwards', async () => {
    const simulator = await startUpstreamSimulator({ deliveryDelayMs: 0 });
    try {
      for (const query of ['', '?from=yesterday&to=2026-01-01T00:00:00Z', '?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z']) {
        expect((await fetch(`${simulator.url}/v1/reports/transactions${query}`)).status).toBe(400);
      }
    } finally {
      await simulator.stop();
    }
  });

  describe('the HTTP adapter says why there is no report', () => {
    const servers: Server[] = [];
    afterAll(() =>
      servers.forEach((s) => {
        s.closeAllConnections();
        s.close();
      }),
    );
    async function upstreamAnswering(answer: (res: ServerResponse, url: URL) => void, reportTimeoutMs = 2_000) {
      const server = createServer((req, res) => answer(res, new URL(req.url ?? '/', 'http://x')));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      // No case here is about connecting: a loaded machine once took over 300 ms to connect over loopback.
      return new HttpUpstream(`http://127.0.0.1:${(server.address() as AddressInfo).port}/base`, { timeoutMs: 100, connectTimeoutMs: 5_000, reportTimeoutMs });
    }
    const window = [new Date('2026-01-01T00:00:00Z'), new Date('2026-01-02T00:00:00Z')] as const;

    it('asks for the window under the base URL and returns the bytes as sent', async () => {
      let asked: URL | undefined;
      const upstream = await upstreamAnswering((res, url) => {
        asked = url;
        res.writeHead(200, { 'Content-Type': 'text/csv' }).end('order_no,status\r\n\u00e9');
      });
      expect((await upstream.transactionReport(...window)).equals(Buffer.from('order_no,status\r\n\u00e9'))).toBe(true);
      expect(asked?.pathname).toBe('/base/v1/reports/transactions');
      expect(Object.fromEntries(asked!.searchParams)).toEqual({ from: '2026-01-01T00:00:00.000+00:00', to: '2026-01-02T00:00:00.000+00:00' });
    });

    // The timeout is short only where the case is the timeout: 10 MiB over a loaded machine's loopback can take longer than 300 ms.
    it.each<[string, (res: ServerResponse) => void, RegExp, number]>([
      ['a status other than 200', (res) => res.writeHead(500).end('broken'), /answered the transaction report with HTTP 500: broken/, 5_000],
      [
        'JSON rather than CSV',
        (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'),
        /Content-Type "application\/json", not text\/csv/,
        5_000,
      ],
      [
        'more than 10 MiB',
        (res) => res.writeHead(200, { 'Content-Type': 'text/csv' }).end(Buffer.alloc(MAX_REPORT_BYTES + 10, 'a')),
        /larger than 10 MiB/,
        5_000,
      ],
      ['no answer in time', () => undefined, /could not be fetched: no reply within 300 ms/, 300],
    ])('%s', async (_name, answer, message, reportTimeoutMs) => {
      const upstream = await upstreamAnswering(answer, reportTimeoutMs);
      const error = await upstream.transactionReport(...window).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamReportError);
      expect((error as Error).message).toMatch(message);
    });

    it('no upstream at all', async () => {
      const upstream = new HttpUpstream('http://127.0.0.1:1', { timeoutMs: 100, connectTimeoutMs: 300 });
      await expect(upstream.transactionReport(...window)).rejects.toThrow(/could not be fetched: ECONNREFUSED/);
    });
  });
});
