import { EventStore, WrongExpectedRevisionError } from '../../src/infrastructure/event-store/event-store.port';
import { walletStream } from '../../src/ledger/streams';
import { WalletWriter } from '../../src/ledger/wallet/wallet-writer';
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

describe('WalletWriter under a busy second writer', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  it('keeps deciding again until its batch lands, however many races it loses', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const conflicts = { left: 30 };
    const writer = new WalletWriter(losingRaces(service.store, conflicts));
    const at = new Date().toISOString();
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => writer.execute(merchant, { type: 'FreezeFunds', orderNo: `O${i}`, attempt: 1, amount: 300n, at })),
    );
    expect(conflicts.left).toBe(0);
    expect(outcomes.map((o) => (o.decision.ok ? 'frozen' : o.decision.refusal.code))).toEqual([
      'frozen',
      'frozen',
      'frozen',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_BALANCE',
    ]);
    expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 900n, 100n]);
  });

  it('gives up with the conflict, and nothing written, when the other writer never stops', async () => {
    const merchant = await openWallet(service.commands, 1_000n);
    const before = (await service.store.readStream(walletStream(merchant))).length;
    const writer = new WalletWriter(losingRaces(service.store, { left: 1_000 }));
    await expect(
      writer.execute(merchant, { type: 'FreezeFunds', orderNo: 'X', attempt: 1, amount: 1n, at: new Date().toISOString() }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect(await service.store.readStream(walletStream(merchant))).toHaveLength(before);
  });
});
