import { EventStore, ExpectedRevision, NO_STREAM, WrongExpectedRevisionError } from './ports/event-store.port';
import { Decider, Decision, fold } from '../shared/decider';
import { decodeEvent, DomainEvent, encodeEvent } from './event-codec';

export interface Loaded<State> {
  state: State;
  /** Expected revision for the next append. */
  revision: ExpectedRevision;
}

export async function loadAggregate<State, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Pick<Decider<State, unknown, Event, string>, 'initialState' | 'evolve'>,
): Promise<Loaded<State>> {
  const recorded = await store.readStream(streamId);
  const state = fold(
    decider,
    recorded.map((event) => decodeEvent<Event>(event)),
  );
  return { state, revision: recorded.length === 0 ? NO_STREAM : recorded[recorded.length - 1].revision };
}

export interface Handled<State, Event, Code extends string> {
  decision: Decision<Event, Code>;
  /** State after the decision's events (or as found, when refused). */
  state: State;
  /** Expected revision for the next append to the stream. */
  revision: ExpectedRevision;
}

/**
 * Load, decide, append with the expected revision. On a conflict the command
 * is decided again against the newer state: a refusal may be the answer then.
 * A caller that already knows the stream's state passes it as `known` and
 * saves the read; a stale guess only costs a conflict and a reload.
 */
export async function handleCommand<State, Command, Event extends DomainEvent, Code extends string>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event, Code>,
  command: Command,
  known?: Loaded<State>,
  maxConflicts = 5,
): Promise<Handled<State, Event, Code>> {
  for (let conflicts = 0; ; conflicts++) {
    const guessing = conflicts === 0 && known !== undefined;
    const { state, revision } = guessing ? known : await loadAggregate(store, streamId, decider);
    const decision = decider.decide(command, state);
    if (!decision.ok && guessing) continue; // refuse only on what the stream says, not on a guess
    if (!decision.ok || decision.events.length === 0) return { decision, state, revision };
    try {
      const result = await store.append(
        streamId,
        decision.events.map((e) => encodeEvent(e)),
        revision,
      );
      return {
        decision,
        state: decision.events.reduce(decider.evolve, state),
        revision: result.nextExpectedRevision,
      };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || conflicts >= maxConflicts) throw error;
    }
  }
}
