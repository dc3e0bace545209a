/**
 * Commits per accepted submit, from pg_stat_database.xact_commit of each
 * system's database, exact rather than roughly right.
 *
 * Postgres 15 publishes a backend's counts when it goes idle, at most once a
 * second; a backend that goes quiet with counts left publishes them 10 s
 * later (or when it disconnects). A reading during or just after a load
 * therefore misses up to a second of every backend's commits, and which
 * backends happen to miss how much varies from reading to reading: ±10 % on a
 * 5 s window, which would make even the CRUD server's exact 2 look like 1.8
 * or 2.2. So each reading is taken once the system has been quiet for
 * PUBLISHED_AFTER_MS: one before each of its loads and two at the end. Between
 * two readings lie one load (warm-up, window and cool-down: all its accepted
 * submits count) and quiet time, whose background commits (pollers) are
 * taken out at the rate measured over the last two readings, which are only
 * quiet time apart. Loads of other systems in between do not matter: each
 * system has its own database.
 */
import { Client } from 'pg';
import { connectionConfig } from '../../src/config/database-connection';
import { log } from './clean-up';
import { acceptedOverall, Measurement } from './measure';
import { sleep } from './processes';
import { System } from './systems';

const PUBLISHED_AFTER_MS = 10_500;
/** Between the two final readings: the quiet time the background rate is measured over. */
const BACKGROUND_SPAN_MS = 5_000;
/** waitUntilIdle reports idle after this long under its threshold. */
const IDLE_CONFIRMATION_MS = 1_000;

interface Reading {
  at: number;
  value: number;
}

interface Load {
  measurement: Measurement;
  before: Reading;
  /** When the server went quiet after the load. */
  quietFrom: number;
}

interface Tally {
  system: System;
  database: string;
  /** Activity of the system that is not yet published after this instant. */
  activeUntil: number;
  loads: Load[];
}

export class CommitCounts {
  private readonly tallies = new Map<System, Tally>();
  /** Background commits per second while quiet, by system (after finish()). */
  readonly background = new Map<System, number>();

  private constructor(private readonly client: Client) {}

  /** Over a connection to the maintenance database, so that reading is not counted. */
  static async open(): Promise<CommitCounts> {
    const config = connectionConfig(process.env.DATABASE_URL);
    const maintenance = config.connectionString
      ? { connectionString: Object.assign(new URL(config.connectionString), { pathname: '/postgres' }).toString() }
      : { ...config, database: 'postgres' };
    const client = new Client(maintenance);
    await client.connect();
    return new CommitCounts(client);
  }

  /** The system has just been set up (its own commits are to be published before the first reading). */
  started(system: System): void {
    if (system.db) this.tallies.set(system, { system, database: system.db.name, activeUntil: Date.now(), loads: [] });
  }

  /** Right before a load of the system: waits until all it did so far is published, and reads. */
  async beforeLoad(system: System): Promise<Reading | undefined> {
    const tally = this.tallies.get(system);
    return tally && this.readQuiet(tally);
  }

  /** After the load that followed `before`, once the server went idle again (`idleAt`, as waitUntilIdle reported it). */
  afterLoad(system: System, before: Reading | undefined, measurement: Measurement, idleAt: number): void {
    const tally = this.tallies.get(system);
    if (!tally || !before) return;
    const quietFrom = idleAt - IDLE_CONFIRMATION_MS;
    tally.loads.push({ measurement, before, quietFrom });
    tally.activeUntil = quietFrom;
  }

  /** After the last load: the final readings; sets `commits` on every measurement. */
  async finish(): Promise<void> {
    await Promise.all([...this.tallies.values()].map((tally) => this.settle(tally)));
  }

  close(): Promise<void> {
    return this.client.end();
  }

  private async settle(tally: Tally): Promise<void> {
    if (tally.loads.length === 0) return;
    const last = await this.readQuiet(tally);
    await sleep(BACKGROUND_SPAN_MS);
    const end = await this.read(tally.database);
    const background = Math.max(0, (end.value - last.value) / ((end.at - last.at) / 1000));
    this.background.set(tally.system, background);
    tally.loads.forEach((load, i) => {
      const after = tally.loads[i + 1]?.before ?? last;
      const quietS = Math.max(0, after.at - load.quietFrom) / 1000;
      const accepted = acceptedOverall(load.measurement);
      load.measurement.commits = accepted > 0 ? (after.value - load.before.value - background * quietS) / accepted : Number.NaN;
    });
  }

  private async readQuiet(tally: Tally): Promise<Reading> {
    const wait = tally.activeUntil + PUBLISHED_AFTER_MS - Date.now();
    if (wait > 0) {
      log(`${tally.system.label}: ${(wait / 1000).toFixed(1)} s for its commit count to be published`);
      await sleep(wait);
    }
    return this.read(tally.database);
  }

  private async read(database: string): Promise<Reading> {
    const { rows } = await this.client.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = $1', [database]);
    return { at: Date.now(), value: Number(rows[0]?.n ?? 0) };
  }
}
