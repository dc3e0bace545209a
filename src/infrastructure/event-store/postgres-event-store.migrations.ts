import { Migration } from '../postgres/migrations';
import { APPEND_FUNCTION_002, APPEND_FUNCTION_003, APPEND_FUNCTION_004 } from './postgres-append-function';

/** The Postgres event store's tables and functions, in the order they were released; each is applied once and never edited. */
export const eventStoreMigrations: readonly Migration[] = [
  {
    id: 'event-store/001-events',
    sql: `
      create table es_events (
        stream_id       text        not null,
        stream_revision bigint      not null,
        -- Global order is (transaction_id, global_position): see readAll.
        transaction_id  xid8        not null default pg_current_xact_id(),
        global_position bigint      generated always as identity,
        event_id        uuid        not null,
        event_type      text        not null,
        data            jsonb       not null,
        metadata        jsonb       not null default '{}',
        created_at      timestamptz not null default now(),
        primary key (stream_id, stream_revision)
      );
      create unique index es_events_global_order on es_events (transaction_id, global_position);
      create function es_events_notify() returns trigger language plpgsql as $$
        begin perform pg_notify('es_events', ''); return null; end $$;
      create trigger es_events_notify after insert on es_events
        for each statement execute function es_events_notify();
      -- The log is append-only: refuse edits even from the service's own role.
      create function es_events_immutable() returns trigger language plpgsql as $$
        begin raise exception 'es_events is append-only'; end $$;
      create trigger es_events_immutable before update or delete on es_events
        for each row execute function es_events_immutable();
    `,
  },
  {
    id: 'event-store/002-grouped-appends',
    sql: `
      -- NOTIFY in the appending transaction takes a global lock at commit and
      -- serialises every append; subscribers are woken after the commit instead.
      drop trigger es_events_notify on es_events;
      drop function es_events_notify();
      ${APPEND_FUNCTION_002}
    `,
  },
  {
    id: 'event-store/003-atomic-groups',
    sql: `
      -- A group of appends to several streams commits all or nothing: an order
      -- and its wallet movement are one append.
      drop function es_append(jsonb);
      ${APPEND_FUNCTION_003}
    `,
  },
  {
    id: 'event-store/004-set-wise-appends',
    sql: `
      drop function es_append(jsonb);
      ${APPEND_FUNCTION_004}
    `,
  },
];
