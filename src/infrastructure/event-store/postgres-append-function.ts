/**
 * The event store's es_append function, generation by generation, as its
 * migrations created it (postgres-event-store.migrations.ts). A generation
 * applied on a database is never edited: a change is a new generation and a
 * new migration that replaces the function.
 */

/**
 * The first grouped append (migration 002), kept as it was applied: see
 * APPEND_FUNCTION_004 for the current one.
 *
 * Appends to many streams in one statement and one commit. Each stream keeps
 * its own expected-revision check and its own conflict: a stream's advisory
 * lock (held to the commit) makes its check and insert atomic against every
 * other appender, so a conflict is an answer, not an error that would abort
 * the others. Locks are taken in one global order, so two batches never wait
 * for each other in a cycle; the same stream twice in a batch is appended in
 * the order given. Expected: a revision, 'no_stream' or 'any'.
 */
export const APPEND_FUNCTION_002 = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql as $fn$
  declare
    entry record;
    last_rev bigint;
    wanted text;
  begin
    for entry in
      select e.value as v, (e.ordinality - 1)::int as i
      from jsonb_array_elements(batch) with ordinality e
      order by hashtextextended(e.value->>'s', 0), e.ordinality
    loop
      perform pg_advisory_xact_lock(hashtextextended(entry.v->>'s', 0));
      select max(stream_revision) into last_rev from es_events where stream_id = entry.v->>'s';
      wanted := entry.v->>'x';
      o_item := entry.i;
      o_actual := last_rev;
      if (wanted = 'no_stream' and last_rev is not null)
         or (wanted not in ('no_stream', 'any') and last_rev is distinct from wanted::bigint) then
        o_appended := false; o_commit := null; o_position := null; o_revision := null;
        return next;
        continue;
      end if;
      with inserted as (
        insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
        select entry.v->>'s', coalesce(last_rev, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
               ev.value->'data', coalesce(ev.value->'metadata', '{}')
        from jsonb_array_elements(entry.v->'ev') with ordinality ev
        returning global_position, stream_revision
      )
      select max(inserted.global_position), max(inserted.stream_revision) into o_position, o_revision from inserted;
      o_appended := true;
      o_commit := pg_current_xact_id()::text;
      return next;
    end loop;
  end $fn$;`;

// The fragments below are shared by generations 003 and 004: they are applied
// text too, so they change only as a copy for a new generation.

/** Every stream append of the batch (m), in its item (e): an item is one append or a group ({g: [...]}). */
const BATCH_MEMBERS = `jsonb_array_elements(batch) with ordinality e,
           jsonb_array_elements(case when e.value ? 'g' then e.value->'g' else jsonb_build_array(e.value) end) with ordinality m`;

/** Every stream of the batch locked (held to the commit), in one global order so that two batches never wait for each other in a cycle. */
const LOCK_STREAMS = `
    for lock_key in
      select distinct hashtextextended(m.value->>'s', 0)
      from ${BATCH_MEMBERS}
      order by 1
    loop
      perform pg_advisory_xact_lock(lock_key);
    end loop;`;

/** Item by item, member by member: a stream that appears twice sees the events its earlier item appended. */
const APPEND_ONE_BY_ONE = `
    for entry in select e.value as v, (e.ordinality - 1)::int as i from jsonb_array_elements(batch) with ordinality e order by e.ordinality
    loop
      members := case when entry.v ? 'g' then entry.v->'g' else jsonb_build_array(entry.v) end;
      actual := '{}';
      fits := true;
      for member in select m.value as v from jsonb_array_elements(members) with ordinality m order by m.ordinality
      loop
        select max(stream_revision) into last_rev from es_events where stream_id = member.v->>'s';
        actual := array_append(actual, last_rev);
        wanted := member.v->>'x';
        if (wanted = 'no_stream' and last_rev is not null)
           or (wanted not in ('no_stream', 'any') and last_rev is distinct from wanted::bigint) then
          fits := false;
        end if;
      end loop;
      for member in select m.value as v, m.ordinality::int as j from jsonb_array_elements(members) with ordinality m order by m.ordinality
      loop
        o_item := entry.i;
        o_member := member.j - 1;
        o_actual := actual[member.j];
        if fits then
          with inserted as (
            insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
            select member.v->>'s', coalesce(o_actual, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
                   ev.value->'data', coalesce(ev.value->'metadata', '{}')
            from jsonb_array_elements(member.v->'ev') with ordinality ev
            returning global_position, stream_revision
          )
          select max(inserted.global_position), max(inserted.stream_revision) into o_position, o_revision from inserted;
          o_appended := true;
          o_commit := pg_current_xact_id()::text;
        else
          o_appended := false; o_commit := null; o_position := null; o_revision := null;
        end if;
        return next;
      end loop;
    end loop;`;

const APPEND_DECLARATIONS = `
    lock_key bigint;
    entry record;
    member record;
    members jsonb;
    actual bigint[];
    last_rev bigint;
    wanted text;
    fits boolean;`;

/**
 * Appends to many streams in one statement and one commit. Each item is one
 * stream's append ({s, x, ev}) or a group of them ({g: [...]}) that commits
 * all or nothing. Every stream keeps its own expected-revision check (x: a
 * revision, 'no_stream' or 'any') and its own conflict: a conflict is an
 * answer for its item, not an error that would abort the others. The
 * streams' advisory locks (held to the commit) make each check and insert
 * atomic against every other appender; they are all taken first, in one
 * global order, so two batches never wait for each other in a cycle. Items
 * are appended in the order given.
 */
export const APPEND_FUNCTION_003 = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_member int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql as $fn$
  declare ${APPEND_DECLARATIONS}
  begin ${LOCK_STREAMS} ${APPEND_ONE_BY_ONE}
  end $fn$;`;

/**
 * The same answers as APPEND_FUNCTION_003, in three statements whatever the
 * batch when its streams are all different (the usual batch: a wallet has
 * one append in flight per instance, an order one step): one reads every
 * stream's revision, one inserts every event of the items whose checks all
 * pass, in item, member and event order. A batch naming a stream twice is
 * appended item by item as before. Two statements per stream, each started
 * and ended by plpgsql, were most of the function's time. JIT is off: the
 * planner takes jsonb_array_elements for 100 rows a call, and the costs of
 * the nested calls passed jit_above_cost (40 ms of compiling per call).
 */
export const APPEND_FUNCTION_004 = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_member int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql set jit = off as $fn$
  declare ${APPEND_DECLARATIONS}
    distinct_streams boolean;
  begin ${LOCK_STREAMS}
    select count(*) = count(distinct m.value->>'s') into distinct_streams from ${BATCH_MEMBERS};
    if distinct_streams then
      return query
        with asked as (
          select (e.ordinality - 1)::int as i, (m.ordinality - 1)::int as j, m.value->>'s' as s, m.value->>'x' as x, m.value->'ev' as ev
          from ${BATCH_MEMBERS}
        ),
        checked as (
          select asked.*, last.rev,
                 not ((asked.x = 'no_stream' and last.rev is not null)
                      or (asked.x not in ('no_stream', 'any') and last.rev is distinct from asked.x::bigint)) as ok
          from asked cross join lateral (select max(stream_revision) as rev from es_events where stream_id = asked.s) last
        ),
        decided as (select checked.*, bool_and(checked.ok) over (partition by checked.i) as fits from checked),
        inserted as (
          insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
          select d.s, coalesce(d.rev, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
                 ev.value->'data', coalesce(ev.value->'metadata', '{}')
          from decided d cross join lateral jsonb_array_elements(d.ev) with ordinality ev
          where d.fits
          order by d.i, d.j, ev.ordinality
          returning stream_id, global_position, stream_revision
        ),
        landed as (select stream_id, max(global_position) as p, max(stream_revision) as r from inserted group by stream_id)
        select d.i, d.j, d.fits, d.rev, case when d.fits then pg_current_xact_id()::text end, landed.p, landed.r
        from decided d left join landed on landed.stream_id = d.s
        order by d.i, d.j;
      return;
    end if; ${APPEND_ONE_BY_ONE}
  end $fn$;`;
