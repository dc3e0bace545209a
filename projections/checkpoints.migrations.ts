import { Migration } from '../src/infrastructure/postgres/migrations';

/** Each projection's position in the log (checkpoints.ts), moved in the transaction that applies its events. */
export const checkpointMigrations: readonly Migration[] = [
  {
    id: 'projections/000-checkpoints',
    sql: `create table projection_checkpoints (
    name             text        primary key,
    position_commit  bigint      not null,
    position_prepare bigint      not null,
    updated_at       timestamptz not null default now()
  )`,
  },
];
