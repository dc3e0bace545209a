import { connect, Socket } from 'node:net';
import { provisionMerchant, signedFetch } from '../support/merchant-fixture';
import { serviceOnFreshDatabase } from '../support/service';

describe('graceful shutdown', () => {
  it('answers requests arriving during shutdown properly or refuses the connection, never with a 5xx', async () => {
    const { service, db } = await serviceOnFreshDatabase();
    const merchant = await provisionMerchant(service, { deposit: 1_000_000n });
    const statuses: number[] = [];
    let refused = 0;
    let stopping = false;
    let seq = 0;
    const client = async () => {
      while (!stopping || refused === 0) {
        const call =
          seq++ % 2
            ? { path: '/api/v2/balance' }
            : {
                path: '/api/v2/topup/submit',
                body: JSON.stringify({ out_trade_no: `SD-${seq}`, sku_id: 'mlbb-86', account_id: '1', account_fields: { server_id: '1' } }),
              };
        try {
          statuses.push((await signedFetch(service, merchant, call)).status);
        } catch {
          refused++; // the server has stopped listening: the client learns nothing happened
          if (stopping) return;
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await new Promise((r) => setTimeout(r, 300));
    stopping = true;
    const stopStarted = Date.now();
    await service.stop();
    const stopMs = Date.now() - stopStarted;
    await Promise.all(clients);
    await db.drop();
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // The clients' keep-alive connections must not hold the shutdown for the keep-alive timeout (65 s).
    expect(stopMs).toBeLessThan(10_000);
  });

  it('closes connections that never sent a request at once, instead of waiting out their timeout', async () => {
    // Browsers and HTTP clients open connections ahead of need; one that never carries a request must not hold a shutdown.
    const { service, db } = await serviceOnFreshDatabase();
    const { port } = new URL(service.url);
    const silent = await new Promise<Socket>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => resolve(socket)).on('error', reject);
    });
    const closedByServer = new Promise<void>((resolve) => silent.on('close', () => resolve()));
    silent.on('error', () => undefined);
    // The server has the connection (a round trip on another one shows it is serving).
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);

    const stopStarted = Date.now();
    await service.stop();
    const stopMs = Date.now() - stopStarted;
    await closedByServer;
    await db.drop();
    expect(silent.bytesRead).toBe(0);
    expect(stopMs).toBeLessThan(10_000);
  }, 90_000);
});
