import { riskySettings } from './database-settings';

describe('riskySettings', () => {
  const ledgerReady = new Map([
    ['fsync', 'on'],
    ['synchronous_commit', 'on'],
    ['full_page_writes', 'on'],
    ['autovacuum', 'on'],
    ['track_counts', 'on'],
  ]);

  it('says nothing of a server set for a ledger, nor of a synchronous_commit that still waits for the local disk', () => {
    expect(riskySettings(ledgerReady)).toEqual([]);
    for (const value of ['local', 'remote_write', 'remote_apply']) expect(riskySettings(new Map([...ledgerReady, ['synchronous_commit', value]]))).toEqual([]);
  });

  it('names each setting that breaks a promise, with what breaks', () => {
    const warnings = riskySettings(new Map([...ledgerReady, ['fsync', 'off'], ['synchronous_commit', 'off'], ['autovacuum', 'off']]));
    expect(warnings.map((w) => w.split(':')[0])).toEqual(['Postgres fsync = off', 'Postgres synchronous_commit = off', 'Postgres autovacuum = off']);
    expect(warnings[1]).toContain('can lose the last orders acknowledged');
  });
});
