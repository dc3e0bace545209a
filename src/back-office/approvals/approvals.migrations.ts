import { Migration } from '../../infrastructure/postgres/migrations';

/**
 * The approvals inbox (approvals.repository.ts): one row per approval
 * stream, written by the request that appends to the stream, as of the
 * stream's revision it shows. The stream is the record; the row is what a
 * list can page and filter, and the sweep (approval-inbox.ts) brings a row
 * that a crash left behind its stream up to date.
 *
 * Why a table the requests write rather than a projection: people read the
 * inbox right after they act (a clerk's request must be in the approver's
 * list at once, on any instance), and a second identical deposit must find
 * the waiting request, while requests come a few a minute against the
 * thousands of ledger events a second the projections' runner is tuned for:
 * a projection would add a checkpoint to every one of its batches for a read
 * model that would still lag behind a person's own action. The row is
 * reserved before the request's event is appended, so no request can reach
 * the log unseen by the sweep, and `npm run cli -- rebuild-approvals` writes
 * every row again from the approval streams.
 */
export const approvalMigrations: readonly Migration[] = [
  {
    id: 'back-office/002-approvals',
    sql: `
      create table approvals (
        approval_id    text        primary key,
        -- The revision of the approval's stream the row shows. -1: written before the request's
        -- event, which a crash may have kept from the log; such a row is listed only once confirmed.
        revision       bigint      not null,
        kind           text        not null,
        status         text        not null check (status in ('pending', 'approved', 'rejected', 'failed')),
        summary        text        not null,
        merchant_id    text,
        -- [{currency, amount}], amounts in minor units as text.
        amounts        jsonb       not null,
        payload        jsonb       not null,
        requested_by   text        not null,
        requested_at   timestamptz not null,
        note           text        not null,
        decided_by     text,
        decided_at     timestamptz,
        decision_note  text,
        carried_out_at timestamptz,
        result         jsonb,
        written_at     timestamptz not null default now()
      );
      create index on approvals (requested_at desc, approval_id desc);
      -- What the sweep reads: requests waiting, approved and not yet carried out, or not yet confirmed.
      create index approvals_unsettled on approvals (requested_at)
        where status = 'pending' or (status = 'approved' and carried_out_at is null) or revision < 0;
    `,
  },
];
