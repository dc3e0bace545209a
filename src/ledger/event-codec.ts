import { EventToAppend, RecordedEvent } from './ports/event-store.port';

/** Money fields are bigints in the domain and decimal strings of minor units in stored JSON. */
const MONEY_FIELDS = new Set(['amount']);

export interface DomainEvent {
  type: string;
  data: object;
}

export function encodeEvent(event: DomainEvent, metadata?: Record<string, unknown>): EventToAppend {
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event.data)) data[key] = typeof value === 'bigint' ? value.toString() : value;
  return { type: event.type, data, metadata };
}

export function decodeEvent<E extends DomainEvent>(recorded: Pick<RecordedEvent, 'type' | 'data'>): E {
  const data: Record<string, unknown> = {};
  // A plain loop: replays decode every event of a long stream, and Object.entries allocates a pair per field.
  for (const key in recorded.data) {
    const value = recorded.data[key];
    data[key] = MONEY_FIELDS.has(key) && typeof value === 'string' ? BigInt(value) : value;
  }
  return { type: recorded.type, data } as E;
}
