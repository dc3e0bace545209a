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
  {
    id: 'upstream-simulator/002-amounts-and-report',
    sql: `
      -- The amount and currency as received, for the transaction report; null in rows kept before.
      alter table upstream_simulator_topups add column amount text, add column currency text;
      -- The report lists the top-ups whose result was ready in a window.
      create index upstream_simulator_topups_ready on upstream_simulator_topups (ready_at);
    `,
  },
];
