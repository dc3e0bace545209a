/**
 * What the benchmark must undo however it ends (children to stop, databases
 * to drop), run in reverse order once; Ctrl-C runs it too, a second Ctrl-C
 * exits at once.
 */
export const log = (message: string) => console.error(`[bench] ${message}`);

const cleanups: Array<{ what: string; run: () => Promise<void> }> = [];
let cleaning: Promise<void> | undefined;
let interrupted = false;

export function onCleanUp(what: string, run: () => Promise<void>): void {
  cleanups.push({ what, run });
}

export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const { what, run } of cleanups.reverse()) {
      try {
        await run();
      } catch (error) {
        log(`clean-up: could not ${what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return cleaning;
}

export const wasInterrupted = () => interrupted;

/** Runs a benchmark's main, cleans up however it ends, and exits: 130 after Ctrl-C, 1 when it failed, else process.exitCode. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => cleanUp().then(() => process.exit(wasInterrupted() ? 130 : (process.exitCode ?? 0))),
    (error) => {
      // After Ctrl-C the run fails in whatever it was doing; that is not news.
      if (!wasInterrupted()) log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return cleanUp().then(() => process.exit(wasInterrupted() ? 130 : 1));
    },
  );
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (cleaning) {
      log(`${signal} again: exiting without finishing the clean-up`);
      process.exit(130);
    }
    interrupted = true;
    log(`${signal}: stopping and cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}
