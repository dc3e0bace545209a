import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Client } from 'pg';

/** The newest of Debian's PostgreSQL servers (/usr/lib/postgresql/15/bin here); PG_BIN names others. */
const PG_BIN = process.env.PG_BIN ?? newestDebianPostgres();
export const STANZA = 'ledger';

export interface Run {
  stdout: string;
  stderr: string;
}

/** What `pgbackrest info` says of one backup. */
export interface BackupInfo {
  label: string;
  type: 'full' | 'diff' | 'incr';
  /** The database's size on disk, and what the backup takes in the repository (compressed). */
  databaseBytes: number;
  repositoryBytes: number;
}

/**
 * A throwaway PostgreSQL cluster with continuous archiving to a pgBackRest
 * repository, all in one temporary directory: the primary's data directory,
 * the repository, pgBackRest's configuration, logs and locks, and the data
 * directories restores go to. The servers listen on 127.0.0.1 and on a socket
 * in that directory, never on the machine's own cluster. Servers and
 * pgBackRest run as the OS user `postgres` when the tests run as root (the
 * server refuses root), else as the user running them.
 */
export class ArchivedCluster {
  readonly config: string;
  readonly primary: string;
  private readonly running = new Map<string, number>();

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.config = join(dir, 'pgbackrest.conf');
    this.primary = join(dir, 'primary');
  }

  /** A new cluster, archiving, in a new temporary directory (removed again if it cannot be set up). */
  static async create(port: number): Promise<ArchivedCluster> {
    const onPath = (name: string) => (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, name)));
    if (!existsSync(join(PG_BIN, 'initdb'))) throw new Error(`no initdb in ${PG_BIN}: apt-get install -y postgresql, or PG_BIN=<its bin directory>`);
    if (!onPath('pgbackrest')) throw new Error('pgbackrest is not on the PATH: apt-get install -y pgbackrest');
    const dir = await mkdtemp(join(tmpdir(), 'topup-restore-drill-'));
    const cluster = new ArchivedCluster(dir, port);
    try {
      await cluster.setUp();
      return cluster;
    } catch (error) {
      await cluster.remove();
      throw error;
    }
  }

  /** initdb, archiving on, the server started, the stanza created and checked. */
  private async setUp(): Promise<void> {
    const { dir, port } = this;
    await chmod(dir, 0o755);
    await this.giveToServerUser(dir);
    await writeFile(
      this.config,
      [
        '[global]',
        `repo1-path=${join(dir, 'repo')}`,
        'repo1-retention-full=2',
        'compress-type=lz4',
        'start-fast=y',
        `log-path=${join(dir, 'log')}`,
        `lock-path=${join(dir, 'lock')}`,
        `spool-path=${join(dir, 'spool')}`,
        'log-level-console=warn',
        'log-level-file=info',
        '',
        `[${STANZA}]`,
        `pg1-path=${this.primary}`,
        `pg1-port=${port}`,
        `pg1-socket-path=${dir}`,
        '',
      ].join('\n'),
    );
    await this.giveToServerUser(this.config);
    await this.asServerUser(join(PG_BIN, 'initdb'), ['-D', this.primary, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale']);
    await writeFile(
      join(this.primary, 'postgresql.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'max_connections = 200',
        'wal_level = replica',
        'archive_mode = on',
        `archive_command = 'pgbackrest --config=${this.config} --stanza=${STANZA} archive-push %p'`,
        '',
      ].join('\n'),
      { flag: 'a' },
    );
    await this.start(this.primary, port);
    await this.pgbackrest(['stanza-create']);
    await this.pgbackrest(['check']);
  }

  url(database: string, port = this.port): string {
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
  }

  async query<T extends Record<string, unknown>>(sql: string, database = 'postgres', port = this.port): Promise<T[]> {
    const client = new Client({ connectionString: this.url(database, port) });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  pgbackrest(args: string[]): Promise<Run> {
    return this.asServerUser('pgbackrest', [`--config=${this.config}`, `--stanza=${STANZA}`, ...args]);
  }

  /** A backup of the running primary, taken online, and what `pgbackrest info` says of it. */
  async backup(type: BackupInfo['type']): Promise<BackupInfo> {
    await this.pgbackrest([`--type=${type}`, 'backup']);
    const backups = await this.backups();
    return backups[backups.length - 1];
  }

  async backups(): Promise<BackupInfo[]> {
    const [stanza] = JSON.parse((await this.pgbackrest(['--output=json', 'info'])).stdout) as PgBackRestInfo[];
    return stanza.backup.map((b) => ({
      label: b.label,
      type: b.type,
      databaseBytes: b.info.size,
      repositoryBytes: b.info.repository.delta,
    }));
  }

  /**
   * Restores the latest backup into a fresh data directory and replays the
   * archived WAL up to `target` (`--type=time --target=...`, or `--type=name`),
   * then promotes. Archiving is off on the copy: a drill must not push WAL of
   * its own timeline into the production repository.
   */
  async restore(into: string, target: string[]): Promise<void> {
    await mkdir(into, { mode: 0o700 });
    await this.giveToServerUser(into);
    await this.pgbackrest([`--pg1-path=${into}`, ...target, '--target-action=promote', '--archive-mode=off', 'restore']);
  }

  /** Starts a server on a data directory and waits until it accepts writes (recovery, if any, over). */
  async start(dataDir: string, port: number): Promise<void> {
    if (await inUse(port)) throw new Error(`127.0.0.1:${port} is taken: the drill's clusters listen on ports 5450 to 5452`);
    await this.asServerUser(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-l', `${dataDir}.log`, '-o', `-p ${port}`, '-w', '-t', '120', 'start']);
    this.running.set(dataDir, port);
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const [{ recovering }] = await this.query<{ recovering: boolean }>('select pg_is_in_recovery() as recovering', 'postgres', port);
      if (!recovering) return;
      if (Date.now() > deadline) throw new Error(`${dataDir} is still in recovery after 120 s`);
    }
  }

  async stop(dataDir: string, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.asServerUser(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']);
    this.running.delete(dataDir);
  }

  /** Stops whatever is still running (immediately) and removes the directory: for afterAll, after a failure too. */
  async remove(): Promise<void> {
    for (const dataDir of [...this.running.keys()]) await this.stop(dataDir, 'immediate').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async giveToServerUser(path: string): Promise<void> {
    if (process.getuid?.() !== 0) return;
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    await chown(path, Number(uid.stdout), Number(gid.stdout));
  }

  private asServerUser(command: string, args: string[]): Promise<Run> {
    return process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
  }
}

interface PgBackRestInfo {
  backup: { label: string; type: BackupInfo['type']; info: { size: number; repository: { delta: number } } }[];
}

/** Runs a command in the directory the tests run in (which the postgres user may not be able to read: `cwd` is /). */
function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: '/', maxBuffer: 16 * 1024 * 1024, timeout: 180_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

function newestDebianPostgres(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)) : [];
  const newest = versions.sort((a, b) => Number(a) - Number(b)).pop() ?? '15';
  return `/usr/lib/postgresql/${newest}/bin`;
}

function inUse(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}
