import { Writable } from 'node:stream';

/** Where a command writes: stdout for results (pipeable), stderr for progress and notes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** stdout as a stream, for long output that must wait while a slow reader catches up. */
  stdoutStream?: Writable;
  /** The directory file arguments are taken from: where the user ran the command (INIT_CWD under npm). */
  directory?: string;
}

export const DEFAULT_PROGRESS_EVERY = 10_000;

/**
 * Long replays say how far they are on stderr, every `every` events, with the
 * rate so far, so an operator can tell a slow replay from a stuck one.
 */
export function progressReporter(io: CliIo, label: string, every = DEFAULT_PROGRESS_EVERY) {
  const started = Date.now();
  let reported = 0;
  const rate = (events: number) => Math.round(events / Math.max((Date.now() - started) / 1000, 0.001));
  return {
    update(events: number): void {
      if (events - reported < every) return;
      reported = events;
      io.stderr(`${label}: ${events} events (${rate(events)} events/s)\n`);
    },
    finish(events: number, note = ''): void {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      io.stderr(`${label}: ${events} events in ${seconds} s (${rate(events)} events/s)${note ? `; ${note}` : ''}\n`);
    },
  };
}
