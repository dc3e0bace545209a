import { comparePositions, type GlobalPosition, type RecordedEvent, type Subscription, type SubscriptionOptions } from '../../ledger/ports/event-store.port';

/** What the subscription reads of an EventStoreDB resolved event: the event, if any, and its position. */
export interface ArrivingEvent<Raw> {
  readonly event?: Raw & { readonly position?: GlobalPosition };
}

/**
 * A subscription stream of the client, as far as batching needs it: the
 * events in $all's order, and a way to let go of it. The client's
 * AllStreamSubscription is one (a Readable in object mode).
 */
export interface SubscriptionSource<Raw> extends AsyncIterable<ArrivingEvent<Raw>> {
  unsubscribe(): Promise<unknown>;
  /** Ends a pending read at once, where unsubscribe alone may leave it waiting. */
  destroy?(): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

export interface BatchingOptions<Raw> extends SubscriptionOptions {
  /** Opens the server's subscription after a position (START: from the beginning). */
  open(after: GlobalPosition): SubscriptionSource<Raw>;
  /** Our event, or undefined for one the service does not read (a system event, another writer's). */
  toRecorded(raw: Raw): RecordedEvent | undefined;
  /** Waits after a failure: from minMs, doubling to maxMs. */
  backoff: { minMs: number; maxMs: number };
}

const DEFAULT_BATCH = 500;

/**
 * A catch-up subscription that hands its handler batches: the events that
 * arrived while the previous batch was handled, up to maxBatchSize. An event
 * after a quiet spell goes alone at once; under load, or catching up, the
 * batches fill. A reader pulls from the server's stream while the handler
 * runs, holding at most two batches, so a slow handler still slows the
 * stream (the client pauses its gRPC reads when nobody reads).
 *
 * A batch the handler rejects is delivered again, the same events, after a
 * back-off. A stream that fails or ends is opened again after the last event
 * delivered, after a back-off that grows while it keeps failing and starts
 * over once a batch goes through; events it repeats are skipped by position.
 */
export function subscribeInBatches<Raw>(options: BatchingOptions<Raw>): Subscription {
  const maxBatch = Math.max(1, options.maxBatchSize ?? DEFAULT_BATCH);
  const { minMs, maxMs } = options.backoff;
  let stopped = false;
  let current: SubscriptionSource<Raw> | undefined;
  let last = options.after;
  let wakePause = (): void => undefined;
  let wakeReader = (): void => undefined;
  let wakeConsumer = (): void => undefined;

  const pause = (ms: number) =>
    stopped
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          wakePause = () => (clearTimeout(timer), resolve());
        });
  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // A failing error reporter must not end the subscription.
    }
  };

  /** Delivers one batch until the handler takes it; false if stopped first. */
  const deliver = async (batch: RecordedEvent[]): Promise<boolean> => {
    for (let retry = minMs; ; retry = Math.min(retry * 2, maxMs)) {
      if (stopped) return false;
      try {
        await options.onEvents(batch);
        return true;
      } catch (error) {
        report(error);
        await pause(retry);
      }
    }
  };

  /** One life of the server's stream: read into a queue, deliver from it. Resolves when the stream ends or fails. */
  const follow = async (source: SubscriptionSource<Raw>): Promise<{ delivered: boolean; error: unknown }> => {
    const queue: RecordedEvent[] = [];
    let ended = false;
    let failure: unknown;
    const arrived = () => wakeConsumer();
    // The position of the last event queued: the stream may repeat what came before `last`.
    let seen = last;
    const reader = (async () => {
      try {
        for await (const resolved of source) {
          const raw = resolved.event;
          if (!raw?.position || comparePositions(raw.position, seen) <= 0) continue;
          seen = raw.position;
          const event = options.toRecorded(raw);
          if (!event) continue;
          queue.push(event);
          arrived();
          while (queue.length >= 2 * maxBatch && !stopped) await new Promise<void>((resolve) => (wakeReader = resolve));
          if (stopped) break;
        }
      } catch (error) {
        failure = error;
      } finally {
        ended = true;
        arrived();
      }
    })();

    let delivered = false;
    try {
      for (;;) {
        if (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wakeConsumer = resolve));
        if (stopped) break;
        if (queue.length === 0) break; // ended, everything delivered
        const batch = queue.splice(0, maxBatch);
        wakeReader();
        if (!(await deliver(batch))) break;
        last = batch[batch.length - 1].position;
        delivered = true;
      }
    } finally {
      wakeReader();
      await source.unsubscribe().catch(() => undefined);
      source.destroy?.();
      await reader;
    }
    return { delivered, error: failure ?? new Error('EventStoreDB subscription ended unexpectedly') };
  };

  const run = async (): Promise<void> => {
    let backoff = minMs;
    while (!stopped) {
      let outcome: { delivered: boolean; error: unknown };
      try {
        const source = (current = options.open(last));
        // Errors reach the reader through the iterator; this keeps one that
        // arrives after the reader let go from becoming an uncaught exception.
        source.on?.('error', () => undefined);
        outcome = await follow(source);
      } catch (error) {
        outcome = { delivered: false, error };
      }
      if (stopped) return;
      if (outcome.delivered) backoff = minMs;
      report(outcome.error);
      await pause(backoff);
      backoff = Math.min(backoff * 2, maxMs);
    }
  };

  const done = run();
  return {
    stop: async () => {
      stopped = true;
      wakePause();
      wakeReader();
      wakeConsumer();
      // Ends the iterator's pending read; a handler call under way finishes first.
      current?.destroy?.();
      await done;
    },
  };
}
