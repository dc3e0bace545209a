import { TruncatingStreamError } from './infrastructure/event-store/esdb-event-store';
import { StartupError } from './shared/startup-error';
import { refuseTruncatedWallets } from './startup-checks';

describe('refuseTruncatedWallets', () => {
  it('lets a start go on when no wallet stream is truncated', () => {
    expect(() => refuseTruncatedWallets([])).not.toThrow();
  });

  it('refuses, naming each wallet stream and its settings (the first five) and the remedy', () => {
    const found = ['a', 'b', 'c', 'd', 'e', 'f'].map((m, i) => new TruncatingStreamError(`wallet-${m}`, i === 0 ? { $maxCount: 10, $tb: 3 } : { $maxAge: 60 }));
    let refusal: unknown;
    try {
      refuseTruncatedWallets(found);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(StartupError);
    const message = (refusal as Error).message;
    expect(message).toContain('6 wallet stream(s) in EventStoreDB have metadata that lets the server drop their events');
    expect(message).toContain('wallet-a ($maxCount: 10, $tb: 3); wallet-b ($maxAge: 60)');
    expect(message).toContain('wallet-e ($maxAge: 60); ...');
    expect(message).not.toContain('wallet-f');
    expect(message).toContain('remove $maxCount, $maxAge and $tb');
  });
});
