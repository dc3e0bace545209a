import { runServiceUntilExit } from '../support/child-service';

const EXIT_TIMEOUT_MS = 60_000;

// A database that does not matter: configuration is refused before any connection.
const BASE_ENV = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/topup_config_startup_never_used',
  SECRETS_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  ADMIN_TOKEN: 'startup-test-admin-token-0123',
};

describe('start-up with invalid configuration', () => {
  it.each<[string, Record<string, string | undefined>, string]>([
    ['PORT=abc', { ...BASE_ENV, PORT: 'abc' }, 'PORT'],
    ['EVENT_STORE=esdb without EVENTSTORE_CONNECTION_STRING', { ...BASE_ENV, EVENT_STORE: 'esdb' }, 'EVENTSTORE_CONNECTION_STRING'],
    ['NODE_ENV=production without ADMIN_TOKEN', { ...BASE_ENV, NODE_ENV: 'production', ADMIN_TOKEN: undefined }, 'ADMIN_TOKEN'],
  ])(
    '%s: exits non-zero naming the variable',
    async (_label, env, variable) => {
      const exit = await runServiceUntilExit(env, EXIT_TIMEOUT_MS);
      expect(exit.signal).toBeNull();
      expect(exit.code).not.toBe(0);
      expect(exit.code).toBe(78); // EX_CONFIG
      expect(exit.stderr).toContain('Invalid configuration');
      expect(exit.stderr).toContain(variable);
      // It stopped at the configuration: it never started listening.
      expect(exit.stdout).not.toContain('listening on');
    },
    EXIT_TIMEOUT_MS + 10_000,
  );
});
