import { Migration } from '../infrastructure/postgres/migrations';

/** The log of callback attempts, one row per attempt number. */
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
];
