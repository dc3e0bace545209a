import { Readiness } from '../../src/observability/health/readiness';
import { walletStream } from '../../src/ledger/streams';
import { WalletWarmup } from '../../src/ledger/wallet/wallet-warmup';
import { WalletWriter } from '../../src/ledger/wallet/wallet-writer';
import { openWallet } from '../support/fixtures';
import { RunningService, startService } from '../support/service';
import { createTestDatabase } from '../support/test-database';
import { parseSamples, sample } from '../support/prometheus-text';
import { ReadModelWarmupCandidates } from '../../projections/warmup-candidates.queries';

const at = new Date().toISOString();
const freeze = (orderNo: string, amount: bigint) => ({ type: 'FreezeFunds' as const, orderNo, attempt: 1, amount, at });

/** A wallet with `freezes` orders of 1 frozen on a deposit of 1,000,000: 2 + freezes events. */
async function walletWith(service: RunningService, freezes: number): Promise<string> {
  const merchant = await openWallet(service.commands, 1_000_000n);
  const writer = service.app.get(WalletWriter);
  await Promise.all(Array.from({ length: freezes }, (_, i) => writer.execute(merchant, freeze(`H-${i}`, 1n))));
  return merchant;
}

async function metrics(service: RunningService) {
  return parseSamples(await (await fetch(`${service.url}/metrics`)).text());
}

async function readiness(service: RunningService) {
  const reply = await fetch(`${service.url}/health/ready`);
  return { status: reply.status, body: (await reply.json()) as any };
}

describe('wallets loaded at start-up (WALLET_WARMUP)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let service: RunningService | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await service?.stop();
    await db.drop();
  });

  it('a restarted instance loads the longest wallets written lately before it reports ready; their first commands read nothing again', async () => {
    service = await startService(db);
    const long = await walletWith(service, 1_200);
    const medium = await walletWith(service, 120);
    const short = await walletWith(service, 12);
    await service.catchUp();
    await service.stop();

    service = await startService(db, { WALLET_WARMUP: '2' });
    let reply = await readiness(service);
    for (const deadline = Date.now() + 30_000; reply.status !== 200 && Date.now() < deadline; reply = await readiness(service)) {
      // Until the load is over the instance is out of rotation, and says why.
      expect(reply.body.checks.wallets).toMatchObject({ ok: false, error: 'wallets still loading (WALLET_WARMUP)', detail: { state: 'loading', wanted: 2 } });
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(reply.status).toBe(200);
    expect(reply.body.data.checks.wallets).toEqual({
      ok: true,
      ms: 0,
      detail: { state: 'done', wanted: 2, loaded: 2, events: 1_202 + 122, ms: expect.any(Number) },
    });

    const loaded = await metrics(service);
    expect([sample(loaded, 'wallet_load_seconds_count'), sample(loaded, 'wallet_load_events_total')]).toEqual([2, 1_202 + 122]);

    const reads = jest.spyOn(service.store, 'readStreamForLoad');
    const writer = service.app.get(WalletWriter);
    for (const merchant of [long, medium, short]) expect((await writer.execute(merchant, freeze('AFTER', 1n))).decision.ok).toBe(true);
    // Only the wallet left out (the shortest) was read, from its first event.
    expect(reads.mock.calls.map(([stream, from]) => [stream, from])).toEqual([[walletStream(short), 0n]]);
    reads.mockRestore();
    const after = await metrics(service);
    expect([sample(after, 'wallet_load_seconds_count'), sample(after, 'wallet_load_events_total')]).toEqual([3, 1_202 + 122 + 14]);
  });

  it('the readiness probe: not ready while the wallets load; ready once loaded, after the longest wait allowed, once the load has failed, or when it is off', async () => {
    service ??= await startService(db);
    const merchant = await walletWith(service, 3);
    const check = (warmup: WalletWarmup) => new Readiness(service!.pool, service!.store, [], [], 30_000, warmup).check();
    const store = service.store;
    /** A writer whose reads of wallets wait until the test lets them go. */
    const held = () => {
      let letGo: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (letGo = resolve));
      const holding = new Proxy(store, {
        get(target, property, receiver) {
          if (property !== 'readStreamForLoad') return Reflect.get(target, property, receiver);
          return async (...args: Parameters<typeof store.readStreamForLoad>) => {
            await gate;
            return target.readStreamForLoad(...args);
          };
        },
      });
      return { writer: new WalletWriter(holding), letGo };
    };
    const over = async (warmup: WalletWarmup) => {
      for (const deadline = Date.now() + 10_000; warmup.status.state === 'loading' && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 10));
    };

    const slow = held();
    const warmup = new WalletWarmup(slow.writer, { longestActiveWallets: async () => [merchant] }, 5, 60_000);
    await warmup.start();
    const loading = await check(warmup);
    expect(loading.ready).toBe(false);
    expect(loading.checks.wallets).toEqual({ ok: false, ms: 0, error: 'wallets still loading (WALLET_WARMUP)', detail: { state: 'loading', wanted: 1 } });
    slow.letGo();
    await over(warmup);
    const loaded = await check(warmup);
    expect(loaded.ready).toBe(true);
    expect(loaded.checks.wallets.detail).toEqual({ state: 'done', wanted: 1, loaded: 1, events: 5, ms: expect.any(Number) });

    // WALLET_WARMUP_MAX_MS: past it the load holds readiness back no more, and goes on in the background.
    const slower = held();
    const capped = new WalletWarmup(slower.writer, { longestActiveWallets: async () => [merchant] }, 5, 300);
    await capped.start();
    expect((await check(capped)).ready).toBe(false);
    await new Promise((r) => setTimeout(r, 350));
    const past = await check(capped);
    expect(past.ready).toBe(true);
    expect(past.checks.wallets).toEqual({ ok: true, ms: 0, detail: { state: 'loading', wanted: 1 } });
    slower.letGo();
    await over(capped);
    expect(capped.status).toMatchObject({ state: 'done', loaded: 1, ready: true });

    // A failed load is no reason to stay out of rotation: each wallet then loads at its first command.
    const failing = new WalletWarmup(new WalletWriter(store), { longestActiveWallets: () => Promise.reject(new Error('connection terminated')) }, 5, 60_000);
    await failing.start();
    const failed = await check(failing);
    expect(failed.ready).toBe(true);
    expect(failed.checks.wallets.detail).toEqual({ state: 'failed', wanted: 0, ms: expect.any(Number) });

    // Off (WALLET_WARMUP=0): it asks for nothing and waits for nothing.
    const asked: number[] = [];
    const off = new WalletWarmup(new WalletWriter(store), { longestActiveWallets: async (n) => (asked.push(n), []) }, 0, 60_000);
    await off.start();
    expect(asked).toEqual([]);
    expect((await check(off)).checks.wallets).toEqual({ ok: true, ms: 0, detail: { state: 'done', wanted: 0 } });
  });

  it('chooses the longest wallets written in the last week: a wallet idle longer, however long, waits for its first command', async () => {
    service ??= await startService(db);
    await walletWith(service, 30);
    await service.catchUp();
    const candidates = new ReadModelWarmupCandidates(service.pool);
    const chosen = await candidates.longestActiveWallets(100);
    const { rows } = await service.pool.query<{ merchant_id: string; revision: string }>('select merchant_id, revision::text from rm_wallets');
    const revision = new Map(rows.map((r) => [r.merchant_id, BigInt(r.revision)]));
    expect(chosen).toHaveLength(rows.length);
    for (let i = 1; i < chosen.length; i++) expect(revision.get(chosen[i - 1])! >= revision.get(chosen[i])!).toBe(true);
    expect(await candidates.longestActiveWallets(2)).toEqual(chosen.slice(0, 2));

    const [longest] = chosen;
    await service.pool.query(`update rm_wallets set updated_at = now() - interval '8 days' where merchant_id = $1`, [longest]);
    expect(await candidates.longestActiveWallets(100)).toEqual(chosen.slice(1));
  });
});
