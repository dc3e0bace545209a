import { Decider, fold } from '../../src/shared/decider';

/**
 * given(events).when(command).then(events | refusal code), for decider specs.
 */
export function specify<State, Command, Event, Code extends string>(decider: Decider<State, Command, Event, Code>) {
  return {
    given(history: Event[]) {
      return {
        when(command: Command) {
          const decision = decider.decide(command, fold(decider, history));
          return {
            then(expected: Event[]) {
              if (!decision.ok) throw new Error(`expected events, got refusal ${decision.refusal.code}: ${decision.refusal.message}`);
              expect(decision.events).toEqual(expected);
            },
            thenRefused(code: Code) {
              if (decision.ok) throw new Error(`expected refusal ${code}, got ${JSON.stringify(decision.events, bigintJson)}`);
              expect(decision.refusal.code).toBe(code);
            },
          };
        },
      };
    },
  };
}

const bigintJson = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);
