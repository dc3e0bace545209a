import { AppConfig } from './config/config';
import { ensureDatabase } from './infrastructure/postgres/connection';

/**
 * What must hold before the application starts, checked outside Nest so a
 * refusal is one clear StartupError (main prints it without a stack) rather
 * than a provider's exception. Development creates a missing database;
 * production never does: a wrong name must not start an empty ledger.
 */
export async function checkBeforeStart(config: AppConfig): Promise<void> {
  await ensureDatabase(config.database, { create: !config.production });
}
