import { fedProjections } from '../projections/all-projections';
import { projectionMigrations } from '../projections/projection-runner';
import { approvalMigrations, consoleSessionMigrations, rebuildRunMigrations, requeryJobMigrations, upstreamReportMigrations } from './back-office';
import { callbackMigrations } from './callbacks';
import { AppConfig } from './config/config';
import { simulatorMigrations } from './fulfilment';
import { eventStoreBindingMigrations } from './infrastructure/event-store/event-store-binding';
import { eventStoreMigrations } from './infrastructure/event-store/postgres-event-store.migrations';
import { Migration } from './infrastructure/postgres/migrations';
import { merchantApiMigrations } from './merchant-api';
import { provisioningMigrations } from './merchant-directory';
import { instanceMigrations } from './observability';

/** Every table the service owns, in the order they are created at start-up. */
export function allMigrations(config: Pick<AppConfig, 'eventStore' | 'upstreamSimulator'>): Migration[] {
  return [
    // Applied first, before the store is opened, by the start-up checks (startup-checks.ts).
    ...eventStoreBindingMigrations,
    ...(config.eventStore === 'postgres' ? eventStoreMigrations : []),
    ...projectionMigrations(fedProjections),
    ...provisioningMigrations,
    ...consoleSessionMigrations,
    ...merchantApiMigrations,
    ...callbackMigrations,
    ...rebuildRunMigrations,
    ...approvalMigrations,
    ...requeryJobMigrations,
    ...upstreamReportMigrations,
    ...instanceMigrations,
    // Only where the in-process simulator runs: a production database with a real upstream never gets the table.
    ...(config.upstreamSimulator ? simulatorMigrations : []),
  ];
}
