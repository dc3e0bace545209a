import { ConfigError, durationList, loadConfig } from './config';

const VALID_ADMIN_TOKEN = 'an-admin-token-of-enough-length';
const VALID_SECRETS_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** Runs loadConfig and returns the ConfigError it throws (fails the test when it does not). */
function configErrorFor(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected loadConfig(${JSON.stringify(env)}) to throw a ConfigError`);
}

describe('loadConfig', () => {
  describe('with an empty environment (local development defaults)', () => {
    const { config, warnings } = loadConfig({});

    it('listens on port 8080', () => {
      expect(config.port).toBe(8080);
    });

    it('uses the postgres event store', () => {
      expect(config.eventStore).toBe('postgres');
      expect(config.eventStoreConnectionString).toBeUndefined();
      expect(config.eventStoreStreamPrefix).toBe('');
    });

    it('retries callbacks after 30s, 2m, 10m, 30m, 2h', () => {
      expect(config.callbackRetryDelaysMs).toEqual([30000, 120000, 600000, 1800000, 7200000]);
    });

    it('gives a request 10 s for its headers and 30 s in all, and keeps idle connections 65 s', () => {
      expect(config).toMatchObject({
        httpHeadersTimeoutMs: 10_000,
        httpRequestTimeoutMs: 30_000,
        httpKeepAliveTimeoutMs: 65_000,
        walletWarmup: 100,
        walletWarmupMaxMs: 60_000,
      });
    });

    it('vacuums the in-flight tables every 3 s', () => {
      expect(config.inFlightVacuumIntervalMs).toBe(3000);
    });

    it('waits 10 s for the database to answer again (a failover) before a request fails', () => {
      expect(config.databaseWaitMs).toBe(10_000);
    });

    it('keeps pooled connections open through 10 minutes with nothing to do', () => {
      expect(config.databasePoolIdleMs).toBe(600_000);
    });

    it('writes this instance’s row for the status page every 10 s', () => {
      expect(config.instanceHeartbeatMs).toBe(10_000);
    });

    it('re-queries 8 orders at a time, and the built-in simulator refuses at once', () => {
      expect(config).toMatchObject({ requeryConcurrency: 8, upstreamSimFailureDelayMs: 0 });
    });

    it('is not production, trusts no proxy and refuses private callback networks', () => {
      expect(config.production).toBe(false);
      expect(config.trustProxy).toBe(0);
      expect(config.callbackAllowPrivateNetworks).toBe(false);
    });

    it('runs the built-in upstream simulator, without a warning', () => {
      expect(config.upstreamUrl).toBeUndefined();
      expect(config.upstreamSimulator).toBe(true);
      expect(warnings.some((w) => w.includes('UPSTREAM'))).toBe(false);
    });

    it('points at the local Postgres', () => {
      expect(config.database).toMatchObject({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'topup' });
    });

    it('generates an ADMIN_TOKEN and warns about it', () => {
      expect(config.adminToken.length).toBeGreaterThanOrEqual(16);
      const warning = warnings.find((w) => w.includes('ADMIN_TOKEN'));
      expect(warning).toBeDefined();
      expect(warning).toContain(config.adminToken);
    });

    it('generates a 32-byte SECRETS_KEY and warns about it', () => {
      expect(config.secretsKey).toHaveLength(32);
      const warning = warnings.find((w) => w.includes('SECRETS_KEY'));
      expect(warning).toBeDefined();
      expect(warning).toContain(config.secretsKey.toString('hex'));
    });

    it('generates different secrets on each start', () => {
      const again = loadConfig({}).config;
      expect(again.adminToken).not.toBe(config.adminToken);
      expect(again.secretsKey.equals(config.secretsKey)).toBe(false);
    });
  });

  it('uses given values without warnings', () => {
    const { config, warnings } = loadConfig({
      PORT: '9090',
      ADMIN_TOKEN: VALID_ADMIN_TOKEN,
      SECRETS_KEY: VALID_SECRETS_KEY,
      EVENT_STORE: 'esdb',
      EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false',
      EVENTSTORE_STREAM_PREFIX: 'ledger-a/',
      UPSTREAM_URL: 'https://upstream.example',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      TRUST_PROXY: '2',
      WALLET_WARMUP: '0',
      DATABASE_WAIT_MS: '0',
      DATABASE_POOL_IDLE_MS: '0',
    });
    expect(warnings).toEqual([]);
    expect(config.databaseWaitMs).toBe(0);
    expect(config.databasePoolIdleMs).toBe(0);
    expect(config).toMatchObject({
      port: 9090,
      adminToken: VALID_ADMIN_TOKEN,
      eventStore: 'esdb',
      eventStoreConnectionString: 'esdb://localhost:2113?tls=false',
      eventStoreStreamPrefix: 'ledger-a/',
      upstreamUrl: 'https://upstream.example',
      upstreamSimulator: false,
      callbackAllowPrivateNetworks: true,
      trustProxy: 2,
      walletWarmup: 0,
    });
    expect(config.secretsKey.toString('hex')).toBe(VALID_SECRETS_KEY);
  });

  describe('stops with a ConfigError naming the variable', () => {
    it.each<[string, NodeJS.ProcessEnv, string]>([
      ['PORT=abc', { PORT: 'abc' }, 'PORT'],
      ['PORT=70000', { PORT: '70000' }, 'PORT'],
      ['PORT=-1', { PORT: '-1' }, 'PORT'],
      ['EVENT_STORE=mysql', { EVENT_STORE: 'mysql' }, 'EVENT_STORE'],
      ['EVENT_STORE=esdb without EVENTSTORE_CONNECTION_STRING', { EVENT_STORE: 'esdb' }, 'EVENTSTORE_CONNECTION_STRING'],
      ['EVENTSTORE_CONNECTION_STRING=http://x', { EVENTSTORE_CONNECTION_STRING: 'http://x' }, 'EVENTSTORE_CONNECTION_STRING'],
      [
        'EVENT_STORE=esdb with a malformed connection string',
        { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'http://x' },
        'EVENTSTORE_CONNECTION_STRING',
      ],
      ['EVENTSTORE_STREAM_PREFIX without EVENT_STORE=esdb', { EVENTSTORE_STREAM_PREFIX: 'ledger-a/' }, 'EVENTSTORE_STREAM_PREFIX'],
      [
        'EVENTSTORE_STREAM_PREFIX=$ledger (a system stream)',
        { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', EVENTSTORE_STREAM_PREFIX: '$ledger' },
        'EVENTSTORE_STREAM_PREFIX',
      ],
      ['DATABASE_URL=http://x', { DATABASE_URL: 'http://x' }, 'DATABASE_URL'],
      ['DATABASE_URL=not a url', { DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
      ['UPSTREAM_URL=ftp://x', { UPSTREAM_URL: 'ftp://x' }, 'UPSTREAM_URL'],
      ['UPSTREAM_SIMULATOR=yes', { UPSTREAM_SIMULATOR: 'yes' }, 'UPSTREAM_SIMULATOR'],
      ['UPSTREAM_SIMULATOR=true with UPSTREAM_URL', { UPSTREAM_SIMULATOR: 'true', UPSTREAM_URL: 'https://upstream.example' }, 'UPSTREAM_URL'],
      ['UPSTREAM_SIMULATOR=false without UPSTREAM_URL', { UPSTREAM_SIMULATOR: 'false' }, 'UPSTREAM_URL'],
      ['UPSTREAM_SIM_DELAY_MS=soon', { UPSTREAM_SIM_DELAY_MS: 'soon' }, 'UPSTREAM_SIM_DELAY_MS'],
      ['UPSTREAM_SIM_FAILURE_DELAY_MS=-5', { UPSTREAM_SIM_FAILURE_DELAY_MS: '-5' }, 'UPSTREAM_SIM_FAILURE_DELAY_MS'],
      ['REQUERY_CONCURRENCY=many', { REQUERY_CONCURRENCY: 'many' }, 'REQUERY_CONCURRENCY'],
      ['REQUERY_CONCURRENCY=1001', { REQUERY_CONCURRENCY: '1001' }, 'REQUERY_CONCURRENCY'],
      ['CALLBACK_RETRY_DELAYS=1x', { CALLBACK_RETRY_DELAYS: '1x' }, 'CALLBACK_RETRY_DELAYS'],
      // An empty string counts as unset (see below); a list of empty items does not.
      ['CALLBACK_RETRY_DELAYS=" "', { CALLBACK_RETRY_DELAYS: ' ' }, 'CALLBACK_RETRY_DELAYS'],
      ['CALLBACK_RETRY_DELAYS=","', { CALLBACK_RETRY_DELAYS: ',' }, 'CALLBACK_RETRY_DELAYS'],
      ['CALLBACK_RETRY_DELAYS=30s,,2m', { CALLBACK_RETRY_DELAYS: '30s,,2m' }, 'CALLBACK_RETRY_DELAYS'],
      ['CALLBACK_RETRY_DELAYS=1.5s', { CALLBACK_RETRY_DELAYS: '1.5s' }, 'CALLBACK_RETRY_DELAYS'],
      ['CALLBACK_RETRY_DELAYS=25h (over a day)', { CALLBACK_RETRY_DELAYS: '30s,25h' }, 'CALLBACK_RETRY_DELAYS'],
      ['PGPORT=abc without DATABASE_URL', { PGPORT: 'abc' }, 'PGPORT'],
      ['CALLBACK_ALLOW_PRIVATE_NETWORKS=yes', { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'yes' }, 'CALLBACK_ALLOW_PRIVATE_NETWORKS'],
      ['TRUST_PROXY=-1', { TRUST_PROXY: '-1' }, 'TRUST_PROXY'],
      ['TRUST_PROXY=11', { TRUST_PROXY: '11' }, 'TRUST_PROXY'],
      ['SECRETS_KEY=short', { SECRETS_KEY: 'short' }, 'SECRETS_KEY'],
      ['SECRETS_KEY=64 non-hex characters', { SECRETS_KEY: 'z'.repeat(64) }, 'SECRETS_KEY'],
      ['ADMIN_TOKEN=short', { ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
      ['SECRETS_KEY_PREVIOUS=short', { SECRETS_KEY_PREVIOUS: 'short' }, 'SECRETS_KEY_PREVIOUS'],
      ['SECRETS_KEY_PREVIOUS with one bad key of two', { SECRETS_KEY_PREVIOUS: `${VALID_SECRETS_KEY},zz` }, 'SECRETS_KEY_PREVIOUS'],
      ['SECRETS_KEY_PREVIOUS with an empty item', { SECRETS_KEY_PREVIOUS: `${VALID_SECRETS_KEY},` }, 'SECRETS_KEY_PREVIOUS'],
      ['EVENT_STORE_POLL_MS=0', { EVENT_STORE_POLL_MS: '0' }, 'EVENT_STORE_POLL_MS'],
      ['ORDER_RECOVERY_INTERVAL_MS=x', { ORDER_RECOVERY_INTERVAL_MS: 'x' }, 'ORDER_RECOVERY_INTERVAL_MS'],
      ['IN_FLIGHT_VACUUM_INTERVAL_MS=-1', { IN_FLIGHT_VACUUM_INTERVAL_MS: '-1' }, 'IN_FLIGHT_VACUUM_INTERVAL_MS'],
      ['IN_FLIGHT_VACUUM_INTERVAL_MS=3s', { IN_FLIGHT_VACUUM_INTERVAL_MS: '3s' }, 'IN_FLIGHT_VACUUM_INTERVAL_MS'],
      ['WALLET_WARMUP=-1', { WALLET_WARMUP: '-1' }, 'WALLET_WARMUP'],
      ['WALLET_WARMUP=10001', { WALLET_WARMUP: '10001' }, 'WALLET_WARMUP'],
      ['WALLET_WARMUP_MAX_MS=1h', { WALLET_WARMUP_MAX_MS: '1h' }, 'WALLET_WARMUP_MAX_MS'],
      ['HTTP_HEADERS_TIMEOUT_MS=0', { HTTP_HEADERS_TIMEOUT_MS: '0' }, 'HTTP_HEADERS_TIMEOUT_MS'],
      ['HTTP_REQUEST_TIMEOUT_MS=30s', { HTTP_REQUEST_TIMEOUT_MS: '30s' }, 'HTTP_REQUEST_TIMEOUT_MS'],
      ['HTTP_REQUEST_TIMEOUT_MS=600001', { HTTP_REQUEST_TIMEOUT_MS: '600001' }, 'HTTP_REQUEST_TIMEOUT_MS'],
      ['HTTP_KEEP_ALIVE_TIMEOUT_MS=-1', { HTTP_KEEP_ALIVE_TIMEOUT_MS: '-1' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
      ['HOST=a host', { HOST: 'a host' }, 'HOST'],
      ['HOST=http://x', { HOST: 'http://x' }, 'HOST'],
      ['LOG_FORMAT=xml', { LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
      ["LOG_LEVEL=log (Nest's name, not pino's)", { LOG_LEVEL: 'log' }, 'LOG_LEVEL'],
      ['LOG_LEVEL=INFO', { LOG_LEVEL: 'INFO' }, 'LOG_LEVEL'],
      ['METRICS_TOKEN=short', { METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
      ['METRICS_TOKEN with a space', { METRICS_TOKEN: 'a token with spaces in it' }, 'METRICS_TOKEN'],
      ['METRICS_PORT=http', { METRICS_PORT: 'http' }, 'METRICS_PORT'],
      ['READY_MAX_LAG_MS=0', { READY_MAX_LAG_MS: '0' }, 'READY_MAX_LAG_MS'],
      ['DATABASE_WAIT_MS=10s', { DATABASE_WAIT_MS: '10s' }, 'DATABASE_WAIT_MS'],
      ['DATABASE_WAIT_MS=300001', { DATABASE_WAIT_MS: '300001' }, 'DATABASE_WAIT_MS'],
      ['DATABASE_POOL_IDLE_MS=10m', { DATABASE_POOL_IDLE_MS: '10m' }, 'DATABASE_POOL_IDLE_MS'],
      ['DATABASE_POOL_IDLE_MS=-1', { DATABASE_POOL_IDLE_MS: '-1' }, 'DATABASE_POOL_IDLE_MS'],
      ['INSTANCE_HEARTBEAT_MS=50', { INSTANCE_HEARTBEAT_MS: '50' }, 'INSTANCE_HEARTBEAT_MS'],
      [
        'HTTP_HEADERS_TIMEOUT_MS longer than HTTP_REQUEST_TIMEOUT_MS',
        { HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' },
        'HTTP_HEADERS_TIMEOUT_MS',
      ],
    ])('%s', (_label, env, variable) => {
      const error = configErrorFor(env);
      expect(error.message).toContain(variable);
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain(variable);
    });
  });

  it('names every bad variable in one error', () => {
    const error = configErrorFor({
      PORT: 'abc',
      EVENT_STORE: 'mysql',
      DATABASE_URL: 'http://x',
      UPSTREAM_URL: 'ftp://x',
      CALLBACK_RETRY_DELAYS: '1x',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'yes',
      TRUST_PROXY: '-1',
      SECRETS_KEY: 'short',
      ADMIN_TOKEN: 'short',
    });
    const variables = [
      'PORT',
      'EVENT_STORE',
      'DATABASE_URL',
      'UPSTREAM_URL',
      'CALLBACK_RETRY_DELAYS',
      'CALLBACK_ALLOW_PRIVATE_NETWORKS',
      'TRUST_PROXY',
      'SECRETS_KEY',
      'ADMIN_TOKEN',
    ];
    expect(error.problems).toHaveLength(variables.length);
    for (const variable of variables) {
      expect(error.message).toContain(variable);
      expect(error.problems.some((p) => p.startsWith(variable))).toBe(true);
    }
  });

  describe('with NODE_ENV=production', () => {
    const UPSTREAM_URL = 'https://upstream.example';

    it('requires ADMIN_TOKEN, SECRETS_KEY and UPSTREAM_URL, naming each', () => {
      const error = configErrorFor({ NODE_ENV: 'production' });
      expect(error.problems).toHaveLength(3);
      for (const variable of ['ADMIN_TOKEN', 'SECRETS_KEY', 'UPSTREAM_URL']) {
        expect(error.problems.some((p) => p.startsWith(variable))).toBe(true);
      }
    });

    it('requires ADMIN_TOKEN', () => {
      const error = configErrorFor({ NODE_ENV: 'production', SECRETS_KEY: VALID_SECRETS_KEY, UPSTREAM_URL });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain('ADMIN_TOKEN');
    });

    it('requires SECRETS_KEY', () => {
      const error = configErrorFor({ NODE_ENV: 'production', ADMIN_TOKEN: VALID_ADMIN_TOKEN, UPSTREAM_URL });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain('SECRETS_KEY');
    });

    it('requires UPSTREAM_URL: the simulator would mark orders delivered that nobody delivers', () => {
      const error = configErrorFor({ NODE_ENV: 'production', ADMIN_TOKEN: VALID_ADMIN_TOKEN, SECRETS_KEY: VALID_SECRETS_KEY });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toMatch(/^UPSTREAM_URL is required when NODE_ENV=production/);
      expect(error.problems[0]).toContain('UPSTREAM_SIMULATOR=true');
    });

    it('treats empty values as missing', () => {
      const error = configErrorFor({ NODE_ENV: 'production', ADMIN_TOKEN: '', SECRETS_KEY: '', UPSTREAM_URL: '', UPSTREAM_SIMULATOR: '' });
      expect(error.problems).toHaveLength(3);
    });

    it('starts when all three are given, without warnings', () => {
      const { config, warnings } = loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: VALID_ADMIN_TOKEN, SECRETS_KEY: VALID_SECRETS_KEY, UPSTREAM_URL });
      expect(config.production).toBe(true);
      expect(config.upstreamSimulator).toBe(false);
      expect(warnings).toEqual([]);
    });

    it('runs the simulator on UPSTREAM_SIMULATOR=true, warning that orders are not really delivered', () => {
      const { config, warnings } = loadConfig({
        NODE_ENV: 'production',
        ADMIN_TOKEN: VALID_ADMIN_TOKEN,
        SECRETS_KEY: VALID_SECRETS_KEY,
        UPSTREAM_SIMULATOR: 'true',
      });
      expect(config.upstreamSimulator).toBe(true);
      expect(warnings).toEqual([expect.stringMatching(/^UPSTREAM_SIMULATOR=true .*orders are NOT really delivered/)]);
    });
  });

  describe('SECRETS_KEY_PREVIOUS', () => {
    const OLD_1 = 'aa'.repeat(32);
    const OLD_2 = 'bb'.repeat(32);

    it('is empty by default', () => {
      expect(loadConfig({}).config.secretsKeysPrevious).toEqual([]);
    });

    it('takes one or more comma-separated keys, in order', () => {
      const { secretsKeysPrevious } = loadConfig({ SECRETS_KEY: VALID_SECRETS_KEY, SECRETS_KEY_PREVIOUS: `${OLD_1}, ${OLD_2}` }).config;
      expect(secretsKeysPrevious.map((k) => k.toString('hex'))).toEqual([OLD_1, OLD_2]);
    });
  });

  describe('CALLBACK_RETRY_DELAYS', () => {
    it.each<[string, number[]]>([
      ['100ms,200ms,300ms,400ms,500ms', [100, 200, 300, 400, 500]],
      ['30s,2m,10m,30m,2h', [30000, 120000, 600000, 1800000, 7200000]],
      [' 1s , 2s ', [1000, 2000]],
      ['5m', [300000]],
    ])('parses %j', (raw, expected) => {
      expect(loadConfig({ CALLBACK_RETRY_DELAYS: raw }).config.callbackRetryDelaysMs).toEqual(expected);
    });

    it('an empty value counts as unset and gives the default delays', () => {
      // read() treats "" as unset, so CALLBACK_RETRY_DELAYS="" is not an error.
      expect(loadConfig({ CALLBACK_RETRY_DELAYS: '' }).config.callbackRetryDelaysMs).toEqual([30000, 120000, 600000, 1800000, 7200000]);
    });

    it('durationList itself refuses an empty list', () => {
      expect(durationList('')).toBeUndefined();
    });
  });

  it('treats other empty values as unset too', () => {
    const { config } = loadConfig({ PORT: '', EVENT_STORE: '', TRUST_PROXY: '', DATABASE_URL: '', UPSTREAM_URL: '' });
    expect(config.port).toBe(8080);
    expect(config.eventStore).toBe('postgres');
    expect(config.trustProxy).toBe(0);
    expect(config.database.connectionString).toBeUndefined();
    expect(config.upstreamUrl).toBeUndefined();
  });

  describe('database connection', () => {
    const pg = { PGHOST: '/var/run/postgresql', PGDATABASE: 'x', PGUSER: 'u', PGPORT: '5433' };

    it('DATABASE_URL wins over PG* variables', () => {
      const url = 'postgres://someone@db.example:6543/ledger';
      const { database } = loadConfig({ ...pg, DATABASE_URL: url }).config;
      expect(database).toEqual({ connectionString: url });
    });

    it('accepts postgresql:// URLs', () => {
      const url = 'postgresql://db.example/ledger';
      expect(loadConfig({ DATABASE_URL: url }).config.database).toEqual({ connectionString: url });
    });

    it('without DATABASE_URL the PG* variables are used', () => {
      const { database } = loadConfig(pg).config;
      expect(database.connectionString).toBeUndefined();
      expect(database).toMatchObject({ host: '/var/run/postgresql', database: 'x', user: 'u', port: 5433 });
    });

    it('PGPASSWORD is passed on', () => {
      expect(loadConfig({ PGPASSWORD: 'secret' }).config.database.password).toBe('secret');
    });
  });

  describe('where it listens and how it is watched', () => {
    it('binds every IPv4 interface, logs pretty text, serves metrics unprotected and allows 30 s of projection lag in development', () => {
      expect(loadConfig({}).config).toMatchObject({ host: '0.0.0.0', logFormat: 'pretty', readyMaxLagMs: 30_000 });
      expect(loadConfig({}).config.metricsToken).toBeUndefined();
      expect(loadConfig({}).config.metricsPort).toBeUndefined();
    });

    it('logs JSON lines in production unless told otherwise', () => {
      const production = { NODE_ENV: 'production', ADMIN_TOKEN: VALID_ADMIN_TOKEN, SECRETS_KEY: VALID_SECRETS_KEY, UPSTREAM_URL: 'https://upstream.example' };
      expect(loadConfig(production).config.logFormat).toBe('json');
      expect(loadConfig({ ...production, LOG_FORMAT: 'pretty' }).config.logFormat).toBe('pretty');
    });

    it('writes info and above unless LOG_LEVEL says otherwise', () => {
      expect(loadConfig({}).config.logLevel).toBe('info');
      expect(loadConfig({ LOG_LEVEL: 'debug' }).config.logLevel).toBe('debug');
      expect(loadConfig({ LOG_LEVEL: 'silent' }).config.logLevel).toBe('silent');
    });

    it('takes HOST, METRICS_TOKEN, METRICS_PORT and READY_MAX_LAG_MS as given', () => {
      const env = { HOST: '::', METRICS_TOKEN: 'metrics-token-0123456789', METRICS_PORT: '9464', READY_MAX_LAG_MS: '5000' };
      expect(loadConfig(env).config).toMatchObject({ host: '::', metricsToken: 'metrics-token-0123456789', metricsPort: 9464, readyMaxLagMs: 5000 });
      expect(loadConfig({ HOST: 'metrics.internal' }).config.host).toBe('metrics.internal');
    });
  });

  describe('APPROVAL_THRESHOLD', () => {
    it('is off when unset or empty: no movement waits for a second person', () => {
      expect(loadConfig({}).config.approvalThreshold).toBeUndefined();
      expect(loadConfig({ APPROVAL_THRESHOLD: '' }).config.approvalThreshold).toBeUndefined();
    });

    it('is an amount in minor units, 0 meaning every movement', () => {
      expect(loadConfig({ APPROVAL_THRESHOLD: '100.00' }).config.approvalThreshold).toBe(10_000n);
      expect(loadConfig({ APPROVAL_THRESHOLD: '2.5' }).config.approvalThreshold).toBe(250n);
      expect(loadConfig({ APPROVAL_THRESHOLD: '0' }).config.approvalThreshold).toBe(0n);
    });

    it.each(['-1', '1.005', '1e3', 'off', ' 100', '100,00'])('refuses %j, naming the variable', (value) => {
      expect(configErrorFor({ APPROVAL_THRESHOLD: value }).problems).toEqual([expect.stringMatching(/^APPROVAL_THRESHOLD must be an amount/)]);
    });
  });
});
