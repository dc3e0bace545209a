import { Logger } from '@nestjs/common';
import type { Pool } from 'pg';

/** A server setting that breaks one of the service's promises when set the wrong way. */
interface SettingRule {
  name: string;
  risky: (value: string) => boolean;
  /** What breaks, for the operator who reads the warning. */
  consequence: string;
}

const RULES: readonly SettingRule[] = [
  { name: 'fsync', risky: (v) => v !== 'on', consequence: 'a crash of the database server can lose orders and deposits already acknowledged' },
  {
    name: 'synchronous_commit',
    risky: (v) => v === 'off',
    consequence: 'a reply is sent before its events are on disk: a crash of the database server can lose the last orders acknowledged',
  },
  { name: 'full_page_writes', risky: (v) => v !== 'on', consequence: 'a crash of the database server can leave torn pages the server cannot repair' },
  {
    name: 'autovacuum',
    risky: (v) => v !== 'on',
    consequence:
      'the dead rows the queues leave behind are never cleared, and intake falls as the log grows (docs/operations.md#postgres-settings-for-a-ledger)',
  },
  { name: 'track_counts', risky: (v) => v !== 'on', consequence: 'autovacuum cannot tell which tables need it' },
];

/** The warnings for the settings a session of this pool sees: one line per setting set the wrong way. */
export function riskySettings(settings: ReadonlyMap<string, string>): string[] {
  return RULES.filter((rule) => settings.has(rule.name) && rule.risky(settings.get(rule.name)!)).map(
    (rule) => `Postgres ${rule.name} = ${settings.get(rule.name)}: ${rule.consequence}`,
  );
}

/**
 * Reads the settings once at start-up and warns of each one set the wrong
 * way. It never stops the service: a test server may run without autovacuum
 * on purpose. A database that does not answer is the readiness probe's to
 * report, not this check's.
 */
export async function warnOfRiskySettings(pool: Pool, logger = new Logger('DatabaseSettings')): Promise<string[]> {
  let rows: { name: string; setting: string }[];
  try {
    ({ rows } = await pool.query<{ name: string; setting: string }>('select name, setting from pg_settings where name = any($1)', [RULES.map((r) => r.name)]));
  } catch {
    return [];
  }
  const warnings = riskySettings(new Map(rows.map((r) => [r.name, r.setting])));
  for (const warning of warnings) logger.warn(warning);
  return warnings;
}
