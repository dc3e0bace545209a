import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionConfig } from '../../src/config/database-connection';
import { chooseDatabase } from '../../src/infrastructure/postgres/embedded/local-database';
import { developmentSecrets } from '../../src/config/development-secrets';
import { StartupError } from '../../src/shared/startup-error';
import { freePort } from '../support/child-service';

/** Which database a start picks when it need not start one, and what development keeps in DATA_DIR. */
describe('local development: the database choice and the kept secrets', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'topup-local-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('chooseDatabase', () => {
    let listener: Server | undefined;
    afterEach(() => new Promise<void>((r) => (listener ? listener.close(() => r()) : r())));

    it('a configured DATABASE_URL wins: no probe, no embedded server', async () => {
      const env = { DATABASE_URL: 'postgres://u@db.example:6543/ledger', EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`, DATA_DIR: dir };
      const choice = await chooseDatabase(connectionConfig(env.DATABASE_URL, env), false, env);
      expect(choice.database).toEqual({ connectionString: env.DATABASE_URL });
      expect(choice.summary).toBe('database: PostgreSQL at db.example:6543, database "ledger", user "u" (from DATABASE_URL)');
      expect(existsSync(join(dir, 'postgres'))).toBe(false);
    });

    it('a PG* variable counts as configured', async () => {
      const env = { PGUSER: 'someone', EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`, DATA_DIR: dir };
      const choice = await chooseDatabase(connectionConfig(undefined, env), false, env);
      expect(choice.database).toMatchObject({ host: '127.0.0.1', port: 5432, user: 'someone' });
      expect(existsSync(join(dir, 'postgres'))).toBe(false);
    });

    it('production never starts a database of its own, even with nothing answering', async () => {
      const env = { NODE_ENV: 'production', EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`, DATA_DIR: dir };
      const choice = await chooseDatabase(connectionConfig(undefined, env), true, env);
      expect(choice.database).toMatchObject({ host: '127.0.0.1', port: 5432, database: 'topup' });
      expect(existsSync(join(dir, 'postgres'))).toBe(false);
    });

    it('with nothing configured, a server answering on the probe address is used', async () => {
      listener = createServer((socket) => socket.destroy());
      await new Promise<void>((r) => listener!.listen(0, '127.0.0.1', r));
      const port = (listener.address() as { port: number }).port;
      const env = { EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${port}`, DATA_DIR: dir };
      const choice = await chooseDatabase(connectionConfig(undefined, env), false, env);
      expect(choice.database).toMatchObject({ host: '127.0.0.1', port, database: 'topup', user: 'postgres' });
      expect(choice.summary).toContain(`the PostgreSQL answering on 127.0.0.1:${port}`);
      expect(existsSync(join(dir, 'postgres'))).toBe(false);
    });

    it.each([['localhost'], ['127.0.0.1:99999'], [':5432']])('refuses EMBEDDED_POSTGRES_PROBE=%s, naming it', async (probe) => {
      const env = { EMBEDDED_POSTGRES_PROBE: probe, DATA_DIR: dir };
      const choice = chooseDatabase(connectionConfig(undefined, env), false, env);
      await expect(choice).rejects.toThrow(StartupError);
      await expect(choice).rejects.toThrow(/EMBEDDED_POSTGRES_PROBE must be host:port/);
    });
  });

  describe('developmentSecrets', () => {
    const file = () => join(dir, 'development-secrets.json');

    it('generates what is unset, writes it only when saved, and the next start reads the same', async () => {
      const first = developmentSecrets({ DATA_DIR: dir });
      expect(first.env.ADMIN_TOKEN).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(first.env.SECRETS_KEY).toMatch(/^[0-9a-f]{64}$/);
      expect(existsSync(file())).toBe(false);
      expect(await first.save()).toEqual([expect.stringContaining('ADMIN_TOKEN and SECRETS_KEY not set: generated and kept in')]);

      const second = developmentSecrets({ DATA_DIR: dir });
      expect([second.env.ADMIN_TOKEN, second.env.SECRETS_KEY]).toEqual([first.env.ADMIN_TOKEN, first.env.SECRETS_KEY]);
      expect(await second.save()).toEqual([expect.stringContaining('ADMIN_TOKEN and SECRETS_KEY not set: kept in')]);
    });

    it('a variable that is set wins, and is never written to the file', async () => {
      const secrets = developmentSecrets({ DATA_DIR: dir, ADMIN_TOKEN: 'given-token-0123456789' });
      expect(secrets.env.ADMIN_TOKEN).toBe('given-token-0123456789');
      expect(await secrets.save()).toEqual([expect.stringContaining('SECRETS_KEY not set')]);
      const stored = JSON.parse(readFileSync(file(), 'utf8'));
      expect(Object.keys(stored)).toEqual(['SECRETS_KEY']);
    });

    it('production neither reads nor writes the file', async () => {
      const env = { DATA_DIR: dir, NODE_ENV: 'production' };
      const secrets = developmentSecrets(env);
      expect(secrets.env).toBe(env);
      expect(await secrets.save()).toEqual([]);
      expect(existsSync(file())).toBe(false);
    });
  });
});
