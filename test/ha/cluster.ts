import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, openSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { ClusterLayout, etcdArguments, haproxyConfig, MemberPorts, patroniConfig, TEST_LAYOUT_PORTS } from './cluster-config';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What Patroni's GET /cluster says of one member. */
export interface MemberStatus {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

export interface HaCluster {
  /** Where the service connects: HAProxy, which forwards to the primary. */
  readonly url: (database: string) => string;
  readonly layout: ClusterLayout;
  /** Every member as Patroni reports it. */
  members(): Promise<MemberStatus[]>;
  /** The member holding the leader lock, or undefined while there is none. */
  leader(): Promise<string | undefined>;
  /** A controlled switchover to `to` (default: the synchronous standby); resolves when Patroni reports it done. */
  switchover(to?: string): Promise<{ from: string; to: string }>;
  /** kill -9 of the primary's postmaster (Patroni itself stays up); returns the member it was. */
  killPrimaryPostmaster(): Promise<string>;
  /** Waits until a member other than `previous` leads and answers as a primary; returns it. */
  waitForLeaderChange(previous: string, timeoutMs?: number): Promise<string>;
  /** Waits for a leader and two streaming standbys, one of them synchronous. */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /** The logs of etcd, the members and HAProxy, for a failing test. */
  logs(): string;
  /** Kills everything it started and removes its directories; safe to call twice or after a failed start. */
  stop(): Promise<void>;
}

interface Started {
  name: string;
  child: ChildProcess;
  log: string;
}

/**
 * One etcd, three Patroni members (Postgres 15, synchronous replication)
 * and HAProxy on the test ports (cluster-config.ts), as plain processes in
 * a fresh temporary directory. Postgres runs as the OS user postgres, so
 * the harness needs root. Throws, after cleaning up, when the cluster is
 * not healthy within two minutes.
 */
export async function startHaCluster(): Promise<HaCluster> {
  const root = await mkdtemp(join(tmpdir(), 'topup-ha-'));
  await chmod(root, 0o700);
  const { uid, gid } = postgresUser();
  chownSync(root, uid, gid);
  const layout: ClusterLayout = { root, ...TEST_LAYOUT_PORTS };
  const started: Started[] = [];
  let stopped = false;

  const launch = (name: string, command: string, args: string[]) => {
    const log = join(root, `${name}.log`);
    const fd = openSync(log, 'a');
    // Its own process group, so stop() can kill what it started (Patroni's pg_basebackup included).
    const child = spawn(command, args, { cwd: root, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.on('error', () => undefined);
    started.push({ name, child, log });
    return child;
  };

  const restOf = (name: string) => layout.members.find((m) => m.name === name)!;

  const cluster: HaCluster = {
    url: (database) => `postgres://postgres@127.0.0.1:${layout.proxyPort}/${database}`,
    layout,
    async members() {
      for (const member of layout.members) {
        try {
          const reply = await fetch(`http://127.0.0.1:${member.restPort}/cluster`, { signal: AbortSignal.timeout(2000) });
          if (reply.ok) return ((await reply.json()) as { members: MemberStatus[] }).members;
        } catch {
          // that member's Patroni is not answering; ask the next
        }
      }
      return [];
    },
    async leader() {
      return (await cluster.members()).find((m) => m.role === 'leader')?.name;
    },
    async switchover(to) {
      const members = await cluster.members();
      const from = members.find((m) => m.role === 'leader')?.name;
      const candidate = to ?? members.find((m) => m.role === 'sync_standby')?.name;
      if (!from || !candidate) throw new Error(`no switchover possible: ${JSON.stringify(members)}`);
      const reply = await fetch(`http://127.0.0.1:${restOf(from).restPort}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: from, candidate }),
      });
      const text = await reply.text();
      if (!reply.ok) throw new Error(`switchover ${from} -> ${candidate}: ${reply.status} ${text}`);
      return { from, to: candidate };
    },
    async killPrimaryPostmaster() {
      const leader = await cluster.leader();
      if (!leader) throw new Error('no leader to kill');
      const pid = postmasterPid(join(root, leader));
      if (!pid) throw new Error(`no postmaster.pid for ${leader}`);
      process.kill(pid, 'SIGKILL');
      return leader;
    },
    async waitForLeaderChange(previous, timeoutMs = 60_000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(200)) {
        const leader = await cluster.leader();
        if (leader && leader !== previous && (await isPrimary(restOf(leader)))) return leader;
      }
      throw new Error(`no new leader after ${previous} within ${timeoutMs / 1000} s: ${JSON.stringify(await cluster.members())}`);
    },
    async waitForHealthy(timeoutMs = 120_000) {
      let seen = '';
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(500)) {
        // Patroni's view (the synchronous standby recorded in etcd, so a failover may promote it) and the primary's own.
        const members = await cluster.members();
        const leader = members.find((m) => m.role === 'leader')?.name;
        const syncStandby = members.find((m) => m.role === 'sync_standby' && m.state === 'running')?.name;
        if (!leader || !syncStandby || members.some((m) => m.state !== 'running')) continue;
        const standbys = await streamingStandbys(restOf(leader)).catch(() => []);
        seen = `${leader}: ${JSON.stringify(standbys)}`;
        if (standbys.length === 2 && standbys.some((s) => s.sync_state === 'sync' && s.application_name === syncStandby)) return;
      }
      throw new Error(`cluster not healthy within ${timeoutMs / 1000} s (${seen}): ${JSON.stringify(await cluster.members())}\n${cluster.logs()}`);
    },
    logs() {
      return started.map((s) => `--- ${s.name} ---\n${tail(s.log, 60)}`).join('\n');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Patroni first, so that nothing starts Postgres again; then each postmaster and its backends.
      for (const s of [...started].reverse()) killGroup(s.child);
      for (const member of layout.members) killPostmaster(join(root, member.name));
      await Promise.all(started.map((s) => exited(s.child)));
      await rm(root, { recursive: true, force: true });
    },
  };

  try {
    launch('etcd', 'etcd', etcdArguments(layout));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${layout.etcdClientPort}/health`)).ok, 30_000, 'etcd');
    for (const member of layout.members) {
      const file = join(root, `${member.name}.yml`);
      await writeFile(file, patroniConfig(layout, member));
      chownSync(file, uid, gid);
      launch(member.name, 'runuser', ['-u', 'postgres', '--', 'patroni', file]);
      // The first member bootstraps the cluster; the others clone it once it leads.
      if (member === layout.members[0]) await waitFor(async () => (await cluster.leader()) === member.name, 60_000, `${member.name} leading`);
    }
    const haproxyFile = join(root, 'haproxy.cfg');
    await writeFile(haproxyFile, haproxyConfig(layout));
    launch('haproxy', 'haproxy', ['-db', '-f', haproxyFile]);
    await cluster.waitForHealthy();
    await waitFor(() => answers(cluster.url('postgres')), 30_000, 'HAProxy forwarding to the primary');
    return cluster;
  } catch (error) {
    const logs = cluster.logs();
    await cluster.stop();
    if (error instanceof Error) error.message += `\n${logs}`;
    throw error;
  }
}

function postgresUser(): { uid: number; gid: number } {
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
  return { uid, gid };
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Patroni starts the postmaster in a session of its own, outside Patroni's
 * process group: kill that session's processes (the postmaster and its
 * backends), one by one.
 */
function killPostmaster(dataDir: string) {
  const pid = postmasterPid(dataDir);
  if (!pid) return;
  // A stale postmaster.pid may name a pid used since by someone else's process.
  if (!processArguments(pid).includes(`-D ${dataDir}`)) return;
  const session = psNumbers(['-o', 'sid=', '-p', String(pid)])[0];
  for (const p of session ? psNumbers(['-o', 'pid=', '-s', String(session)]) : []) signal(p, 'SIGKILL');
}

function processArguments(pid: number): string {
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

function psNumbers(args: string[]): number[] {
  try {
    return execFileSync('ps', args, { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when nothing matches
  }
}

function killGroup(child: ChildProcess) {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  signal(-child.pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

async function isPrimary(member: MemberPorts): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${member.restPort}/primary`, { method: 'OPTIONS', signal: AbortSignal.timeout(2000) })).status === 200;
  } catch {
    return false;
  }
}

async function streamingStandbys(leader: MemberPorts): Promise<{ application_name: string; sync_state: string }[]> {
  const client = new Client({ host: '127.0.0.1', port: leader.pgPort, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(`select application_name, sync_state from pg_stat_replication where state = 'streaming' order by 1`);
    return rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query('select pg_is_in_recovery() as standby');
    return rows[0].standby === false;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
  }
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
