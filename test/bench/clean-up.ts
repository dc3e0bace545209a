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
