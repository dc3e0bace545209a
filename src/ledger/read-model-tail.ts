import { EventStore, RecordedEvent } from './ports/event-store.port';

/** What a read model says of one stream, as of the stream's event at `revision` (-1n: before its first event). */
export interface StreamView<State> {
  state: State;
  revision: bigint;
}

/**
 * A read model's view of one stream brought up to the stream's head: the
 * events after the revision the view reflects, folded into it. Projections
 * apply events after they are committed, so this is how a read straight
 * after a write (a balance after a 202) already shows that write, on any
 * instance. A view with nothing projected yet is loadAggregate's job
 * (command-handling.ts): the whole stream, folded by its decider.
 */
export async function withStreamTail<State>(
  store: EventStore,
  streamId: string,
  view: StreamView<State>,
  evolve: (state: State, event: RecordedEvent) => State,
): Promise<StreamView<State>> {
  const tail = await store.readStream(streamId, view.revision + 1n);
  let { state } = view;
  for (const event of tail) state = evolve(state, event);
  return { state, revision: tail.length > 0 ? tail[tail.length - 1].revision : view.revision };
}
