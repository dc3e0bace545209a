/**
 * A decider: how an aggregate decides on commands and evolves from events.
 * `decide` is pure. `evolve` returns the next state and may reuse the given
 * state's collections, so folding a long stream costs O(n): callers never keep
 * a state after evolving it.
 */
export interface Decider<State, Command, Event, Code extends string> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Decision<Event, Code>;
}

/** A business refusal: a value with a stable code, never an exception. */
export interface Refusal<Code extends string = string> {
  readonly code: Code;
  readonly message: string;
}

export type Decision<Event, Code extends string> =
  { readonly ok: true; readonly events: readonly Event[] } | { readonly ok: false; readonly refusal: Refusal<Code> };

export const accept = <Event>(...events: Event[]): Decision<Event, never> => ({ ok: true, events });
export const refuse = <Code extends string>(code: Code, message: string): Decision<never, Code> => ({
  ok: false,
  refusal: { code, message },
});

export function fold<State, Event>(decider: Pick<Decider<State, never, Event, string>, 'initialState' | 'evolve'>, events: Iterable<Event>): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
