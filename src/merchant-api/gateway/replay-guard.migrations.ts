import { Migration } from '../../infrastructure/postgres/migrations';

/*
 * merchant_admit's generations differ in three parts: how it is made (002
 * creates it, later ones replace it), how a request moves its merchant's
 * rate window, and how a nonce is stored. Migrations are applied text: a
 * generation passes its own parts, and the shared text stays as applied.
 */

/** 002 and 003: any other second resets the window. */
const WINDOW_RESET_BY_ANY_OTHER_SECOND = `hits = case when w.window_start = excluded.window_start then w.hits + 1 else 1 end,
            window_start = excluded.window_start`;
/** 004: a request of the second before counts in the window and leaves it where it is. */
const WINDOW_KEPT_FOR_THE_SECOND_BEFORE = `hits = case when excluded.window_start in (w.window_start, w.window_start - 1) then w.hits + 1 else 1 end,
            window_start = case when excluded.window_start = w.window_start - 1 then w.window_start else excluded.window_start end`;
/** 002: a nonce once, whoever sends it again. */
const NONCE_ONCE = `insert into merchant_nonces (merchant_id, nonce, expires_at) values (r.v->>'m', r.v->>'n', (r.v->>'e')::timestamptz)
          on conflict do nothing;`;
/** 003 on: a nonce kept under its admission's token, fresh again for the same admission sent again. */
const NONCE_UNDER_ITS_TOKEN = `insert into merchant_nonces as k (merchant_id, nonce, expires_at, admission)
          values (r.v->>'m', r.v->>'n', (r.v->>'e')::timestamptz, (r.v->>'t')::bigint)
          on conflict (merchant_id, nonce) do update set expires_at = excluded.expires_at
            where k.admission = excluded.admission;`;

function admitFunction(create: 'create' | 'create or replace', windowMove: string, nonceInsert: string): string {
  return `${create} function merchant_admit(requests jsonb)
      returns table (o_item int, o_fresh boolean, o_hits int, o_version text)
      language plpgsql as $fn$
      declare
        r record;
        n int := jsonb_array_length(requests);
        hits int[] := array_fill(0, array[n]);
        fresh boolean[] := array_fill(true, array[n]);
        counted int;
        inserted int;
      begin
        for r in select e.value as v, e.ordinality::int as i from jsonb_array_elements(requests) with ordinality e
                 order by e.value->>'m', e.ordinality loop
          insert into merchant_rate_windows as w (merchant_id, window_start, hits) values (r.v->>'m', (r.v->>'w')::bigint, 1)
          on conflict (merchant_id) do update set
            ${windowMove}
          returning w.hits into counted;
          hits[r.i] := counted;
        end loop;
        for r in select e.value as v, e.ordinality::int as i from jsonb_array_elements(requests) with ordinality e
                 where e.value->>'n' is not null order by e.value->>'m', e.value->>'n', e.ordinality loop
          ${nonceInsert}
          get diagnostics inserted = row_count;
          fresh[r.i] := inserted = 1;
        end loop;
        return query
          select e.ordinality::int - 1, fresh[e.ordinality], hits[e.ordinality],
                 (select m.updated_at::text from merchants m where m.merchant_id = e.value->>'m')
          from jsonb_array_elements(requests) with ordinality e;
      end $fn$;`;
}

/** The merchant API's nonces, rate windows and the function that admits requests in batches (replay-guard.ts). */
export const merchantApiMigrations: readonly Migration[] = [
  {
    id: 'merchant-api/001-nonces-and-rate-windows',
    sql: `
      create table merchant_nonces (
        merchant_id text        not null,
        nonce       text        not null,
        expires_at  timestamptz not null,
        primary key (merchant_id, nonce)
      );
      create index on merchant_nonces (expires_at);
      -- One row per merchant: the current one-second window and its count.
      create table merchant_rate_windows (
        merchant_id  text   primary key,
        window_start bigint not null,
        hits         int    not null
      );`,
  },
  {
    id: 'merchant-api/002-grouped-admission',
    sql: `
      -- Admits many requests in one statement and one commit. Rate windows are
      -- locked first, in merchant order, then nonces are inserted: every batch
      -- takes its locks in one order, so concurrent batches never deadlock.
      -- A nonce twice in one batch is fresh only for its first request.
      ${admitFunction('create', WINDOW_RESET_BY_ANY_OTHER_SECOND, NONCE_ONCE)}`,
  },
  {
    id: 'merchant-api/003-admission-token',
    sql: `
      -- Each admission carries a token of its own, kept with the nonce. When
      -- the connection drops while a batch commits (a failover), the batch is
      -- sent again: a nonce stored under the same token is that request's own,
      -- admitted the first time, and stays fresh for it; anyone else's request
      -- with that nonce is still a replay.
      alter table merchant_nonces add column admission bigint;
      ${admitFunction('create or replace', WINDOW_RESET_BY_ANY_OTHER_SECOND, NONCE_UNDER_ITS_TOKEN)}`,
  },
  {
    id: 'merchant-api/004-rate-window-kept-for-the-second-before',
    sql: `
      -- A request stamped with the second before its merchant's window (its
      -- batch committed after a later one, or its instance's clock is a
      -- little behind another's) counts in that window and leaves it where
      -- it is. Moving the window back reset the count: two instances whose
      -- clocks straddled a second's edge reset each other's count at every
      -- request, and the limit did not hold for that part of the second.
      -- A request older still starts its own window, as before, so that one
      -- instance's clock far ahead cannot hold every merchant's window ahead.
      ${admitFunction('create or replace', WINDOW_KEPT_FOR_THE_SECOND_BEFORE, NONCE_UNDER_ITS_TOKEN)}`,
  },
];
