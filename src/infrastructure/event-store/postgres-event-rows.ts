import { CheckedEvent, JsonObject, LoadedEvent, RecordedEvent, ReplayedEvent } from '../../ledger/ports/event-store.port';

// What the Postgres event store's reads select from es_events, and how their rows become events.

/** A row of es_events as the reads of whole events select it (EVENT_COLUMNS). */
export interface EventRow {
  stream_id: string;
  stream_revision: string;
  transaction_id: string;
  global_position: string;
  event_id: string;
  event_type: string;
  data: JsonObject;
  metadata: JsonObject;
  /** Milliseconds since the epoch. */
  created_ms: string;
}

// Columns are cast to text for exact bigints; ORDER BY and WHERE must therefore
// name the table's columns (e.*), not these same-named text outputs. The time
// comes as whole milliseconds (what a Date holds): parsing a timestamp's text
// was a noticeable share of replaying a long stream.
export const EVENT_COLUMNS = `e.stream_id, e.stream_revision::text, e.transaction_id::text, e.global_position::text,
  e.event_id::text, e.event_type, e.data, e.metadata, floor(extract(epoch from e.created_at) * 1000)::bigint::text as created_ms`;
export const SELECT_EVENT = `select ${EVENT_COLUMNS} from es_events e`;
export const SELECT_EVENT_HELD = (held: boolean) => `select ${EVENT_COLUMNS}, ${held} as held from es_events e`;
/**
 * What a replay reads (ReplayedEvent): no event id, no stream id (it is the
 * one asked for), and of the metadata only its chain links. Decoding each
 * row's metadata object and id was a large share of replaying a long stream.
 */
export const REPLAY_COLUMNS = `e.stream_revision::text, e.transaction_id::text, e.global_position::text, e.event_type, e.data,
  e.metadata->'hash' as hash, e.metadata->'prev_hash' as prev_hash, floor(extract(epoch from e.created_at) * 1000)::bigint::text as created_ms`;
/** What a check reads (CheckedEvent): a replay's columns without the links and the time. */
export const CHECK_COLUMNS = `e.stream_revision::text, e.transaction_id::text, e.global_position::text, e.event_type, e.data`;
/**
 * What the wallet writer's load reads (LoadedEvent): no position, time or
 * previous link. Reading a wallet of 100,000 events with these took about
 * two thirds of the time with a replay's.
 */
export const LOAD_COLUMNS = `e.stream_revision::text, e.event_type, e.data, e.metadata->'hash' as hash`;
/**
 * Revisions have no gaps, so a slice is a closed range of them: the planner
 * then walks the index for that range instead of sorting the rest of a long
 * stream. The limit (the range's own length) keeps the walk in index order:
 * without it, a range the statistics take for tens of thousands of rows (low
 * revisions: most streams are short) was read by a bitmap scan and a sort,
 * once with two parallel workers.
 */
export const IN_SLICE = 'where e.stream_id = $1 and e.stream_revision >= $2 and e.stream_revision < $2::bigint + $3 order by e.stream_revision limit $3';

/**
 * REPLAY_COLUMNS in order: revision, transaction id, position, type, data,
 * then the metadata's hash and prev_hash as JSON values (SQL null when the
 * metadata has no such entry), then created_ms.
 */
export type ReplayRow = [string, string, string, string, Record<string, unknown>, unknown, unknown, string];

/** CHECK_COLUMNS in order: revision, transaction id, position, type, data. */
export type CheckRow = [string, string, string, string, Record<string, unknown>];

/** LOAD_COLUMNS in order: revision, type, data, the event's own hash. */
export type LoadRow = [string, string, Record<string, unknown>, unknown];

export function replayedEvents(streamId: string, rows: readonly ReplayRow[]): ReplayedEvent[] {
  return rows.map(([revision, commit, prepare, type, data, hash, prevHash, createdMs]) => ({
    streamId,
    revision: BigInt(revision),
    position: { commit: BigInt(commit), prepare: BigInt(prepare) },
    type,
    data,
    metadata: chainLinks(hash, prevHash),
    createdAt: new Date(Number(createdMs)),
  }));
}

export function checkedEvents(streamId: string, rows: readonly CheckRow[]): CheckedEvent[] {
  return rows.map(([revision, commit, prepare, type, data]) => ({
    streamId,
    revision: BigInt(revision),
    position: { commit: BigInt(commit), prepare: BigInt(prepare) },
    type,
    data,
  }));
}

export function loadedEvents(streamId: string, rows: readonly LoadRow[]): LoadedEvent[] {
  return rows.map(([revision, type, data, hash]) => ({ streamId, revision: BigInt(revision), type, data, metadata: hash === null ? {} : { hash } }));
}

function chainLinks(hash: unknown, prev_hash: unknown): ReplayedEvent['metadata'] {
  if (hash === null) return prev_hash === null ? {} : { prev_hash };
  return prev_hash === null ? { hash } : { hash, prev_hash };
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: BigInt(row.stream_revision),
    position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
    type: row.event_type,
    data: row.data,
    metadata: row.metadata,
    createdAt: new Date(Number(row.created_ms)),
  };
}
