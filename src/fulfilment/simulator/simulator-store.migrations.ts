import { Migration } from '../../infrastructure/postgres/migrations';

/** The built-in upstream simulator's own table (simulator-store.ts), made only where the simulator runs in process. */
export const simulatorMigrations: readonly Migration[] = [
  {
    id: 'upstream-simulator/001-topups',
    sql: `
      -- What the built-in upstream simulator received, so that it answers the
      -- same after a restart. Not the service's data: the simulator's own.
      create table upstream_simulator_topups (
        order_no    text        primary key,
        reply       jsonb       not null,
        ready_at    timestamptz not null,
        received_at timestamptz not null default now()
      );
    `,
  },
];
