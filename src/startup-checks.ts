import { Logger } from '@nestjs/common';
import { AppConfig } from './config/config';
import { bindEventStore } from './infrastructure/event-store/event-store-binding';
import { createPool, ensureDatabase } from './infrastructure/postgres/connection';
import { AppSecretCipher, someOf, surveySecrets } from './merchant-directory';
import { StartupError } from './shared/startup-error';

/**
 * What must hold before the application starts, checked outside Nest so a
 * refusal is one clear StartupError (main prints it without a stack) rather
 * than a provider's exception.
 */
export async function checkBeforeStart(config: AppConfig, logger = new Logger('Startup')): Promise<void> {
  // Development creates a missing database; production never does: a wrong name must not start an empty ledger.
  await ensureDatabase(config.database, { create: !config.production });
  await checkEventStoreBinding(config);
  await checkStoredSecrets(config, logger);
}

/** The read models follow one store for good: another one is refused before it is connected to (event-store-binding.ts). */
async function checkEventStoreBinding(config: AppConfig): Promise<void> {
  const pool = createPool(config.database, { max: 1 });
  await bindEventStore(pool, config.eventStore).finally(() => pool.end());
}

/**
 * Every stored merchant secret must open under SECRETS_KEY or a key in
 * SECRETS_KEY_PREVIOUS; otherwise each of those merchants would get a 500 on
 * every request. This stops start-up in development too: a generated
 * SECRETS_KEY cannot open what an earlier run stored, and saying so at once
 * beats a service that runs but serves none of its merchants.
 */
async function checkStoredSecrets(config: AppConfig, logger: Logger): Promise<void> {
  const pool = createPool(config.database, { max: 1 });
  const cipher = new AppSecretCipher(config.secretsKey, config.secretsKeysPrevious);
  const { merchants, total, underPrevious, unopenable } = await surveySecrets(pool, cipher).finally(() => pool.end());
  if (unopenable.length > 0) {
    throw new StartupError(
      `SECRETS_KEY cannot open the app secrets of ${unopenable.length} of ${merchants} merchants (${someOf(unopenable)}), ` +
        'nor can any key in SECRETS_KEY_PREVIOUS: they were sealed under another key. Set SECRETS_KEY to the key they were sealed with, ' +
        'or, while rotating, give that key in SECRETS_KEY_PREVIOUS (docs/secrets-key-rotation.md). ' +
        'A SECRETS_KEY generated for one run, as development does when it is unset, opens nothing an earlier run stored.',
    );
  }
  if (underPrevious > 0) {
    logger.warn(
      `${underPrevious} of ${total} stored app secrets are sealed under SECRETS_KEY_PREVIOUS: run "npm run cli -- reseal-secrets" to seal them under SECRETS_KEY, then SECRETS_KEY_PREVIOUS can be dropped`,
    );
  } else if (config.secretsKeysPrevious.length > 0) {
    logger.log('SECRETS_KEY_PREVIOUS is set, but no stored merchant secret needs it');
  }
}
