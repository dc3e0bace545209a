import { Migration } from '../infrastructure/postgres/migrations';

/** The log of callback attempts, one row per attempt number, and their results counted per minute. */
export const callbackMigrations: readonly Migration[] = [
  {
    id: 'callbacks/001-attempts',
    sql: `
      create table callback_attempts (
        order_no      text        not null,
        attempt       int         not null,
        kind          text        not null check (kind in ('scheduled', 'manual')),
        started_at    timestamptz not null,
        url           text,
        status_code   int,
        latency_ms    int,
        reply_excerpt text,
        -- null: the sender died before the result was recorded (counted as not acknowledged).
        acknowledged  boolean,
        error         text,
        sent_by       text        not null,
        -- One row per attempt number: two senders can never both make attempt n.
        primary key (order_no, attempt)
      );`,
  },
  {
    id: 'callbacks/002-attempt-minutes',
    // The attempts' results counted by the minute each started, a row per
    // minute and sending instance (see recordAttemptResults): the operations
    // dashboard reads a day of them by key, not the attempts themselves.
    sql: `
      create table callback_attempt_minutes (
        minute           timestamptz not null,
        sent_by          text        not null,
        acknowledged     int         not null default 0,
        not_acknowledged int         not null default 0,
        primary key (minute, sent_by)
      );`,
  },
  {
    id: 'callbacks/003-attempts-fillfactor',
    // Room for an attempt's result, written soon after its start, on the page the start went to: no index
    // holds a result column, so the write is then a HOT update.
    sql: `alter table callback_attempts set (fillfactor = 80);`,
  },
];
