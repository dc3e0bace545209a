import { Migration } from '../../infrastructure/postgres/migrations';

/** The runs of online rebuilds of the read models (rebuild-runs.ts). */
export const rebuildRunMigrations: readonly Migration[] = [
  {
    id: 'back-office/001-projection-rebuilds',
    sql: `
      create table projection_rebuilds (
        rebuild_id   text        primary key,
        status       text        not null check (status in ('running', 'done', 'failed')),
        requested_by text        not null,
        started_at   timestamptz not null default now(),
        finished_at  timestamptz,
        -- [{name, events, position}], updated as the rebuild goes.
        projections  jsonb       not null,
        error        text,
        run_by       text        not null,
        -- Renewed while the rebuild runs: a stale one means its instance died.
        heartbeat_at timestamptz not null default now()
      );
      -- One rebuild at a time across every instance.
      create unique index one_running_rebuild on projection_rebuilds ((true)) where status = 'running';
    `,
  },
];
