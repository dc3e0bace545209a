import { Logger } from '@nestjs/common';
import { AppConfig } from './config/config';
import { bindEventStore } from './infrastructure/event-store/event-store-binding';
import { createPool, ensureDatabase } from './infrastructure/postgres/connection';
import { AppSecretCipher, someOf, surveySecrets } from './merchant-directory';
import { allWalletMerchants } from '../projections/wallets.queries';
import type { TruncatingStreamError } from './infrastructure/event-store/esdb-event-store';
import { isEventStoreUnavailable } from './infrastructure/event-store/store-unavailable';
import { walletStream } from './ledger/streams';
import { EXIT_UNAVAILABLE, StartupError } from './shared/startup-error';

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
  if (config.eventStore === 'esdb') await checkWalletStreamsKeepEveryEvent(config);
}

/**
 * EventStoreDB drops the events of a stream whose metadata says $maxCount,
 * $maxAge or $tb. Every wallet the read models know is checked here, 16
 * metadata reads at a time, since wallets are few and hold the money; an
 * order stream (and a wallet opened since the read models last moved) is
 * checked at its first load instead, before any decision rests on it
 * (EsdbEventStore.readStream).
 */
async function checkWalletStreamsKeepEveryEvent(config: AppConfig): Promise<void> {
  const pool = createPool(config.database, { max: 1 });
  const merchants = await allWalletMerchants(pool).finally(() => pool.end());
  if (merchants.length === 0) return;
  const { EsdbEventStore } = await import('./infrastructure/event-store/esdb-event-store');
  const store = EsdbEventStore.fromConnectionString(config.eventStoreConnectionString!, { streamPrefix: config.eventStoreStreamPrefix });
  try {
    refuseTruncatedWallets(await store.truncatedStreams(merchants.map(walletStream)));
  } catch (error) {
    if (!isEventStoreUnavailable(error)) throw error;
    throw new StartupError(`EVENTSTORE_CONNECTION_STRING: EventStoreDB does not answer (${(error as Error).message})`, EXIT_UNAVAILABLE);
  } finally {
    await store.close();
  }
}

/** A refusal naming the wallet streams EventStoreDB may truncate (the first five) and what to do. */
export function refuseTruncatedWallets(found: readonly TruncatingStreamError[]): void {
  if (found.length === 0) return;
  const named = found.slice(0, 5).map((f) => `${f.streamId} (${f.settingsText})`);
  throw new StartupError(
    `${found.length} wallet stream(s) in EventStoreDB have metadata that lets the server drop their events: ${named.join('; ')}${found.length > 5 ? '; ...' : ''}. ` +
      'A wallet must keep every event: remove $maxCount, $maxAge and $tb from the metadata of each (its $$ stream); ' +
      'if a scavenge ran since they were set, restore the lost events from a backup before starting.',
  );
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
