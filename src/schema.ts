import { fedProjections } from '../projections/all-projections';
import { projectionMigrations } from '../projections/projection-runner';
import { rebuildRunMigrations } from './back-office/read-models/rebuild-runs.migrations';
import { consoleSessionMigrations } from './back-office/auth/console-sessions.migrations';
import { callbackMigrations } from './callbacks/callbacks.migrations';
import { AppConfig } from './config/config';
import { simulatorMigrations } from './fulfilment/simulator/simulator-store.migrations';
import { eventStoreMigrations } from './infrastructure/event-store/postgres-event-store.migrations';
import { Migration } from './infrastructure/postgres/migrations';
import { merchantApiMigrations } from './merchant-api/gateway/replay-guard.migrations';
import { provisioningMigrations } from './merchant-directory/provisioning.migrations';

/** Every table the service owns, in the order they are created at start-up. */
export function allMigrations(config: Pick<AppConfig, 'eventStore' | 'upstreamSimulator'>): Migration[] {
  return [
    ...(config.eventStore === 'postgres' ? eventStoreMigrations : []),
    ...projectionMigrations(fedProjections),
    ...provisioningMigrations,
    ...consoleSessionMigrations,
    ...merchantApiMigrations,
    ...callbackMigrations,
    ...rebuildRunMigrations,
    // Only where the in-process simulator runs: a production database with a real upstream never gets the table.
    ...(config.upstreamSimulator ? simulatorMigrations : []),
  ];
}
