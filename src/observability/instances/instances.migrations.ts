import { Migration } from '../../infrastructure/postgres/migrations';

/** The running instances, each writing its own row (instance-heartbeat.ts). */
export const instanceMigrations: readonly Migration[] = [
  {
    id: 'instances/001-service-instances',
    sql: `
      create table service_instances (
        instance_id          text        primary key,
        started_at           timestamptz not null,
        seen_at              timestamptz not null,
        -- FULFILMENT_CONCURRENCY, and the slots held: now, and on average since the row's previous write.
        fulfilment_slots     int         not null,
        fulfilment_in_flight int         not null,
        fulfilment_held      real        not null,
        callback_slots       int         not null
      );`,
  },
  {
    id: 'instances/002-clock-offset',
    sql: `
      -- How far the instance's clock was from the database's as its row was
      -- written (instance minus database, in ms); null from a version that
      -- did not measure it.
      alter table service_instances add column clock_offset_ms real;`,
  },
];
