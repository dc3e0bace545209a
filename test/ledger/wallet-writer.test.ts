import { EventStore, WrongExpectedRevisionError } from '../../src/ledger/ports/event-store.port';
import { walletStream } from '../../src/ledger/streams';
import { WalletWriter } from '../../src/ledger/wallet/wallet-writer';
import { checkWalletChain } from '../../src/auditing/chain-check';
import { openWallet, walletAmounts } from '../support/fixtures';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/** The real store, except that the next `n` appends lose the race as if another instance had written first. */
function losingRaces(store: EventStore, n: { left: number }): EventStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'append') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<EventStore['append']>) => {
        if (n.left > 0) {
          n.left--;
          throw new WrongExpectedRevisionError(args[0], args[2]);
        }
        return target.append(...args);
      };
    },
  });
}

/** The real store; every read of `streamId` (whole events, a replay's or a load's) noted with the revision it starts at. */
function notingReads(store: EventStore, streamId: string, reads: bigint[]): EventStore {
  const slices = new Set<PropertyKey>(['readStreamForReplay', 'readStreamForLoad']);
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'readStream' && !slices.has(property)) return Reflect.get(target, property, receiver);
      return (...args: [string, bigint?, number?]) => {
        if (args[0] === streamId) reads.push(args[1] ?? 0n);
        if (property === 'readStream') return target.readStream(...args);
        return property === 'readStreamForLoad'
          ? target.readStreamForLoad(args[0], args[1]!, args[2]!)
          : target.readStreamForReplay(args[0], args[1]!, args[2]!);
      };
    },
  });
}

// One service on a fresh database for every case: each opens wallets of its own.
let service: RunningService;
let teardown: () => Promise<void>;
beforeAll(async () => {
  ({ service, teardown } = await serviceOnFreshDatabase());
});
afterAll(async () => teardown());

describe('WalletWriter under a busy second writer', () => {
  it('keeps deciding again until its batch lands, however many races it loses', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const conflicts = { left: 30 };
    let counted = 0;
    const writer = new WalletWriter(losingRaces(service.store, conflicts), { onConflict: () => counted++ });
    const at = new Date().toISOString();
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => writer.execute(merchant, { type: 'FreezeFunds', orderNo: `O${i}`, attempt: 1, amount: 300n, at })),
    );
    expect(conflicts.left).toBe(0);
    expect(counted).toBe(30);
    expect(outcomes.map((o) => (o.decision.ok ? 'frozen' : o.decision.refusal.code))).toEqual([
      'frozen',
      'frozen',
      'frozen',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_BALANCE',
    ]);
    expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 900n, 100n]);
  });

  it('after losing to another writer, reads only what that writer appended, and decides again on it', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const stream = walletStream(merchant);
    const reads: bigint[] = [];
    let conflicts = 0;
    const mine = new WalletWriter(notingReads(service.store, stream, reads), { onConflict: () => conflicts++ });
    const other = new WalletWriter(service.store);
    const at = new Date().toISOString();
    const freeze = (orderNo: string, amount: bigint) => ({ type: 'FreezeFunds' as const, orderNo, attempt: 1, amount, at });

    for (let i = 0; i < 10; i++) expect((await mine.execute(merchant, freeze(`MINE-${i}`, 10n))).decision.ok).toBe(true);
    expect(reads).toEqual([0n]); // the wallet's history once, then its own appends
    const known = BigInt((await service.store.readStream(stream)).length);
    for (let i = 0; i < 5; i++) expect((await other.execute(merchant, freeze(`OTHER-${i}`, 100n))).decision.ok).toBe(true);

    // Decided on its cached wallet, the append loses; the other writer's five events are read, and the
    // freeze decided again on them: 1,000 − 100 − 500 leaves 400, so 450 is refused, 400 taken.
    const [refused, taken] = await Promise.all([mine.execute(merchant, freeze('MINE-10', 450n)), mine.execute(merchant, freeze('MINE-11', 400n))]);
    expect(reads).toEqual([0n, known]);
    expect(conflicts).toBe(1);
    expect(refused.decision.ok ? 'frozen' : refused.decision.refusal.code).toBe('INSUFFICIENT_BALANCE');
    expect(taken.decision.ok).toBe(true);
    expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 1_000n, 0n]);
  });

  it('loads a wallet longer than one read a slice at a time, and continues its amounts and its hash chain', async () => {
    const merchant = await openWallet(service.commands, 1_000_000n);
    const at = new Date().toISOString();
    // 2 + 5,500 freezes + 5,500 deductions: 11,002 events, three slices of up to 5,000.
    const history = new WalletWriter(service.store);
    const orders = Array.from({ length: 5_500 }, (_, i) => `LONG-${i}`);
    await Promise.all(orders.map((orderNo) => history.execute(merchant, { type: 'FreezeFunds', orderNo, attempt: 1, amount: 10n, at })));
    await Promise.all(orders.map((orderNo) => history.execute(merchant, { type: 'DeductFrozenFunds', orderNo, attempt: 1, at })));
    const stream = walletStream(merchant);
    expect((await service.store.readStream(stream)).length).toBe(11_002);

    const reads: bigint[] = [];
    const fresh = new WalletWriter(notingReads(service.store, stream, reads));
    const deducted = await fresh.execute(merchant, { type: 'DeductFrozenFunds', orderNo: 'LONG-0', attempt: 1, at });
    const frozen = await fresh.execute(merchant, { type: 'FreezeFunds', orderNo: 'AFTER', attempt: 1, amount: 7n, at });

    expect(reads).toEqual([0n, 5_000n, 10_000n]);
    // Every closed hold made it into the loaded state, and the amounts are the log's.
    expect(deducted.decision.ok ? 'deducted' : deducted.decision.refusal.code).toBe('ALREADY_DEDUCTED');
    expect(frozen.decision.ok).toBe(true);
    expect([frozen.balance, frozen.frozen]).toEqual([1_000_000n - 55_000n, 7n]);
    expect(await walletAmounts(service.store, merchant)).toEqual([945_000n, 7n, 944_993n]);
    // Its append was chained onto the head the slices led to.
    expect(await checkWalletChain(service.store, merchant)).toMatchObject({ intact: true, events_checked: 11_003 });
  });

  it('gives up with the conflict, and nothing written, when the other writer never stops', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const before = (await service.store.readStream(walletStream(merchant))).length;
    const writer = new WalletWriter(losingRaces(service.store, { left: 1_000 }));
    await expect(writer.execute(merchant, { type: 'FreezeFunds', orderNo: 'X', attempt: 1, amount: 1n, at: new Date().toISOString() })).rejects.toBeInstanceOf(
      WrongExpectedRevisionError,
    );
    expect(await service.store.readStream(walletStream(merchant))).toHaveLength(before);
  });

  it('appends a companion with its command: a companion whose stream conflicts fails alone, the rest of its batch lands', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const writer = new WalletWriter(service.store);
    const at = new Date().toISOString();
    const taken = `companion-taken-${merchant}`;
    await service.store.append(taken, [{ type: 'Existing', data: {} }], 'no_stream');
    const companion = (streamId: string) => ({ streamId, expected: 'no_stream' as const, events: [{ type: 'Companion', data: { streamId } }] });
    const streams = Array.from({ length: 5 }, (_, i) => (i === 2 ? taken : `companion-${i}-${merchant}`));
    const outcomes = await Promise.allSettled(
      streams.map((stream, i) => writer.execute(merchant, { type: 'FreezeFunds', orderNo: `C${i}`, attempt: 1, amount: 100n, at }, companion(stream))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ streamId: taken });
    for (const outcome of outcomes) if (outcome.status === 'fulfilled') expect(outcome.value.companion?.nextExpectedRevision).toBe(0n);
    expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 400n, 600n]);
    const written = await service.store.readStreams(streams);
    expect(written.map((events) => events.map((e) => e.type))).toEqual([['Companion'], ['Companion'], ['Existing'], ['Companion'], ['Companion']]);
    const frozen = (await service.store.readStream(walletStream(merchant))).filter((e) => e.type === 'FundsFrozen');
    expect(frozen.map((e) => e.data.orderNo)).toEqual(['C0', 'C1', 'C3', 'C4']);
  });
});

describe('WalletWriter.warm: wallets loaded before their first command', () => {
  const at = new Date().toISOString();
  const freeze = (orderNo: string, amount: bigint) => ({ type: 'FreezeFunds' as const, orderNo, attempt: 1, amount, at });

  /** A wallet with `freezes` frozen orders of 10 each on a deposit of 100,000: 2 + freezes events. */
  async function walletWith(freezes: number): Promise<string> {
    const merchant = await openWallet(service.commands, 100_000n);
    const history = new WalletWriter(service.store);
    await Promise.all(Array.from({ length: freezes }, (_, i) => history.execute(merchant, freeze(`H-${i}`, 10n))));
    return merchant;
  }

  it('reads each wallet once; a command during the load waits for it and is decided on the whole history', async () => {
    const [long, short] = [await walletWith(300), await walletWith(3)];
    const reads: bigint[] = [];
    const writer = new WalletWriter(notingReads(notingReads(service.store, walletStream(long), reads), walletStream(short), reads));

    const warming = writer.warm([long, short, 'no-such-merchant']);
    // Sent while the long wallet loads: decided after it, on all 300 freezes.
    const during = writer.execute(long, freeze('DURING', 50n));
    expect(await warming).toEqual({ wallets: 2, events: 302n + 5n });
    const outcome = await during;
    expect(outcome.decision.ok).toBe(true);
    expect([outcome.balance, outcome.frozen]).toEqual([100_000n, 3_050n]);
    // A repeat of a freeze from the history is refused from the loaded state; a refusal reads only
    // the stream's tail first (after revision 302, the freeze above), never the history again.
    const repeated = await writer.execute(long, freeze('H-7', 10n));
    expect(repeated.decision.ok ? 'frozen' : repeated.decision.refusal.code).toBe('ALREADY_FROZEN');
    expect((await writer.execute(short, freeze('AFTER', 5n))).decision.ok).toBe(true);

    expect(reads).toEqual([0n, 0n, 303n]);
    expect(await walletAmounts(service.store, long)).toEqual([100_000n, 3_050n, 96_950n]);
  });

  it('leaves a wallet it already holds alone, and loads no more than it keeps', async () => {
    const [first, second, third] = [await walletWith(2), await walletWith(2), await walletWith(2)];
    const writer = new WalletWriter(service.store, { cachedWallets: 2 });
    await writer.execute(first, freeze('CACHED', 1n));
    // The first is cached already; of the list, only two are taken at all.
    expect(await writer.warm([first, second, third])).toEqual({ wallets: 1, events: 4n });
  });

  it('stops at the first read that fails and rejects with it; a command then loads its wallet itself', async () => {
    const merchant = await walletWith(5);
    const failing = new Proxy(service.store, {
      get(target, property, receiver) {
        if (property !== 'readStreamForLoad') return Reflect.get(target, property, receiver);
        return () => Promise.reject(new Error('connection terminated'));
      },
    });
    const broken = new WalletWriter(failing);
    await expect(broken.warm([merchant])).rejects.toThrow('connection terminated');

    const reads: bigint[] = [];
    const writer = new WalletWriter(notingReads(service.store, walletStream(merchant), reads));
    const aborted = new AbortController();
    aborted.abort();
    expect(await writer.warm([merchant], { signal: aborted.signal })).toEqual({ wallets: 0, events: 0n });
    expect(reads).toEqual([]);
    const outcome = await writer.execute(merchant, freeze('AFTER', 5n));
    expect([outcome.decision.ok, outcome.frozen]).toEqual([true, 55n]);
    expect(reads).toEqual([0n]);
  });
});

describe('WalletWriter: closed holds remembered for a while, the wallet read whole for a decision that needs an older one', () => {
  it('refuses a hold closed again and a freeze again as the wallet read whole does, and keeps deciding fresh freezes on what it holds', async () => {
    const merchant = await openWallet(service.commands, 1_000_000n);
    const stream = walletStream(merchant);
    const reads: bigint[] = [];
    const start = Date.now();
    let now = start;
    const iso = (ms: number) => new Date(ms).toISOString();
    const writer = new WalletWriter(notingReads(service.store, stream, reads), { closedHoldsKeptMs: 60_000, nowMs: () => now });
    const code = (o: { decision: { ok: boolean; refusal?: { code: string } } }) => (o.decision.ok ? 'ok' : o.decision.refusal!.code);
    const freeze = (orderNo: string, at: number) => writer.execute(merchant, { type: 'FreezeFunds', orderNo, attempt: 1, amount: 10n, at: iso(at) });
    const deduct = (orderNo: string, at: number) => writer.execute(merchant, { type: 'DeductFrozenFunds', orderNo, attempt: 1, at: iso(at) });
    const wholeReads = () => reads.filter((from) => from === 0n).length;

    for (let i = 0; i < 10; i++) expect(code(await freeze(`OLD-${i}`, start))).toBe('ok');
    for (let i = 0; i < 10; i++) expect(code(await deduct(`OLD-${i}`, start))).toBe('ok');
    expect(wholeReads()).toBe(1); // the first load

    // Five minutes on, a new order's settlement makes the writer forget the holds closed before the last minute.
    now = start + 5 * 60_000;
    expect([code(await freeze('RECENT', now)), code(await deduct('RECENT', now))]).toEqual(['ok', 'ok']);

    // A hold it remembers is refused without reading the wallet whole; one forgotten is refused the same after a read from the start.
    expect(code(await deduct('RECENT', now))).toBe('ALREADY_DEDUCTED');
    expect(wholeReads()).toBe(1);
    expect(code(await deduct('OLD-0', now))).toBe('ALREADY_DEDUCTED');
    expect(wholeReads()).toBe(2);

    // Settling again forgets again; a freeze dated before the last hold forgotten (its order read then) is decided on the whole wallet.
    expect([code(await freeze('RECENT-2', now)), code(await deduct('RECENT-2', now))]).toEqual(['ok', 'ok']);
    expect(code(await freeze('OLD-1', start + 1_000))).toBe('ALREADY_FROZEN');
    expect(wholeReads()).toBe(3);
    // A freeze dated now is decided on what the writer holds: no read at all.
    const readsBefore = reads.length;
    expect(code(await freeze('FRESH', now))).toBe('ok');
    expect(reads.length).toBe(readsBefore);

    // 12 deductions of 10, one hold of 10 open.
    expect(await walletAmounts(service.store, merchant)).toEqual([1_000_000n - 120n, 10n, 1_000_000n - 130n]);
    expect(await checkWalletChain(service.store, merchant)).toMatchObject({ intact: true });
  });

  it('forgets at most once every 10 s: a hold old enough just after a forgetting pass is remembered until the next', async () => {
    const merchant = await openWallet(service.commands, 1_000_000n);
    const reads: bigint[] = [];
    const start = Date.now();
    let now = start;
    const iso = (ms: number) => new Date(ms).toISOString();
    const writer = new WalletWriter(notingReads(service.store, walletStream(merchant), reads), { closedHoldsKeptMs: 60_000, nowMs: () => now });
    const code = (o: { decision: { ok: boolean; refusal?: { code: string } } }) => (o.decision.ok ? 'ok' : o.decision.refusal!.code);
    const freeze = (orderNo: string, at: number) => writer.execute(merchant, { type: 'FreezeFunds', orderNo, attempt: 1, amount: 10n, at: iso(at) });
    const deduct = (orderNo: string, at: number) => writer.execute(merchant, { type: 'DeductFrozenFunds', orderNo, attempt: 1, at: iso(at) });
    const order = async (orderNo: string, at: number) => [code(await freeze(orderNo, at)), code(await deduct(orderNo, at))];
    const wholeReads = () => reads.filter((from) => from === 0n).length;

    expect(await order('A', start)).toEqual(['ok', 'ok']);
    expect(await order('D', start + 2_000)).toEqual(['ok', 'ok']);
    // 61 s on: a pass forgets A (closed over a minute ago), not D.
    now = start + 61_000;
    expect(await order('B', now)).toEqual(['ok', 'ok']);
    // 65 s on, D is over a minute old too, but the last pass was 4 s ago: D is still remembered, refused without a whole read.
    now = start + 65_000;
    expect(await order('E', now)).toEqual(['ok', 'ok']);
    const before = wholeReads();
    expect(code(await deduct('D', now))).toBe('ALREADY_DEDUCTED');
    expect(wholeReads()).toBe(before);
    // 72 s on, the next pass forgets D: the same refusal now needs the wallet read whole.
    now = start + 72_000;
    expect(await order('F', now)).toEqual(['ok', 'ok']);
    expect(code(await deduct('D', now))).toBe('ALREADY_DEDUCTED');
    expect(wholeReads()).toBe(before + 1);
  });
});
