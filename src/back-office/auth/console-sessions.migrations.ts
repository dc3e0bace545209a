import { Migration } from '../../infrastructure/postgres/migrations';

/** The staff console's sessions (console-sessions.ts). */
export const consoleSessionMigrations: readonly Migration[] = [
  {
    id: 'console/001-sessions',
    sql: `
      -- Console sign-ins. Only the SHA-256 of the cookie's value is kept, like a staff token's.
      -- token_hash is the hash of the token signed in with: a session lives only as long as it does.
      create table console_sessions (
        id_hash      bytea       primary key,
        staff_id     text        not null,
        token_hash   bytea       not null,
        csrf_token   text        not null,
        created_at   timestamptz not null default now(),
        last_seen_at timestamptz not null default now()
      );
      create index on console_sessions (staff_id);
    `,
  },
];
