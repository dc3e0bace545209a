import { EsdbEventStore, EsdbClient, EsdbReadDeadlineError, TruncatingStreamError, truncatingSettings } from './esdb-event-store';
import { isEventStoreUnavailable } from './store-unavailable';
import { comparePositions, GlobalPosition, RecordedEvent, START, Subscription } from '../../ledger/ports/event-store.port';

/**
 * The adapter driven by a stand-in for the client: its subscription stream is
 * an async iterable of resolved events that the test feeds, fails and ends.
 * (The contract suite in test/event-store runs the adapter against a real
 * server when EVENTSTORE_CONNECTION_STRING is set.)
 */

interface Raw {
  id: string;
  streamId: string;
  revision: bigint;
  type: string;
  isJson: boolean;
  data: unknown;
  metadata: unknown;
  created: Date;
  position: GlobalPosition;
}

const at = (n: number): GlobalPosition => ({ commit: BigInt(n * 100), prepare: BigInt(n * 100) });
const raw = (n: number, overrides: Partial<Raw> = {}): Raw => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  streamId: `order-${n}`,
  revision: 0n,
  type: 'OrderPlaced',
  isJson: true,
  data: { n },
  metadata: {},
  created: new Date(0),
  position: at(n),
  ...overrides,
});

/** The client's subscription stream: an async iterable the test pushes to, fails or ends. */
class StandInStream implements AsyncIterable<{ event?: Raw }> {
  private readonly queued: ({ event?: Raw } | Error | 'end')[] = [];
  private waiting?: () => void;
  closed = false;

  constructor(readonly from: unknown) {}

  push(...events: Raw[]): void {
    this.queued.push(...events.map((event) => ({ event })));
    this.waiting?.();
  }

  fail(error: Error): void {
    this.queued.push(error);
    this.waiting?.();
  }

  end(): void {
    this.queued.push('end');
    this.waiting?.();
  }

  async unsubscribe(): Promise<void> {
    this.closed = true;
    this.end();
  }

  destroy(): void {
    this.closed = true;
    this.end();
  }

  on(): this {
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<{ event?: Raw }> {
    for (;;) {
      while (this.queued.length === 0) await new Promise<void>((resolve) => (this.waiting = resolve));
      const next = this.queued.shift()!;
      if (next === 'end') return;
      if (next instanceof Error) throw next;
      yield next;
    }
  }
}

/** A one-off streaming read of the client: the given events, or none ever (a node that stopped answering). */
function streamingRead(events: Raw[] | 'hang', onCancel = () => undefined) {
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  return {
    cancel: async () => (onCancel(), cancelled()),
    async *[Symbol.asyncIterator]() {
      if (events === 'hang') return void (await cancel);
      for (const event of events) yield { event };
    },
  };
}

class StandInClient {
  readonly streams: StandInStream[] = [];
  readonly opened: number[] = [];
  readonly calls: { method: string; stream?: string; options: Record<string, unknown> }[] = [];
  metadata = new Map<string, Record<string, unknown>>();
  streamEvents = new Map<string, Raw[] | 'hang'>();
  /** $all, for readAll. */
  allEvents: Raw[] = [];
  readonly filters: unknown[] = [];

  subscribeToAll(options: { fromPosition: unknown; filter?: unknown }) {
    this.filters.push(options.filter);
    const stream = new StandInStream(options.fromPosition);
    this.streams.push(stream);
    this.opened.push(Date.now());
    return stream;
  }

  async appendToStream(stream: string, _events: unknown, options: Record<string, unknown>) {
    this.calls.push({ method: 'appendToStream', stream, options });
    return { success: true, nextExpectedRevision: 0n, position: at(1) };
  }

  readStream(stream: string, options: Record<string, unknown>) {
    this.calls.push({ method: 'readStream', stream, options });
    return streamingRead(this.streamEvents.get(stream) ?? []);
  }

  readAll(options: Record<string, unknown>) {
    this.calls.push({ method: 'readAll', options });
    // From a position inclusively, as the server reads.
    const from = options.fromPosition;
    const events = typeof from === 'object' ? this.allEvents.filter((e) => comparePositions(e.position, from as GlobalPosition) >= 0) : this.allEvents;
    return streamingRead(events.slice(0, Number(options.maxCount)));
  }

  async getStreamMetadata(stream: string, options: Record<string, unknown>) {
    this.calls.push({ method: 'getStreamMetadata', stream, options });
    return { streamName: stream, metadata: this.metadata.get(stream) };
  }

  async dispose() {}

  latest(): StandInStream {
    return this.streams[this.streams.length - 1];
  }
}

const BACKOFF = { minMs: 20, maxMs: 80 };

function storeWith(client: StandInClient, readDeadlineMs = 10_000) {
  return new EsdbEventStore(client as unknown as EsdbClient, { backoff: BACKOFF, readDeadlineMs });
}

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A handler whose calls the test releases one by one. */
function gatedHandler() {
  const batches: RecordedEvent[][] = [];
  const gates: (() => void)[] = [];
  return {
    batches,
    release: () => gates.shift()?.(),
    onEvents: async (events: readonly RecordedEvent[]) => {
      batches.push([...events]);
      await new Promise<void>((resolve) => gates.push(resolve));
    },
  };
}

const numbers = (batches: RecordedEvent[][]) => batches.map((batch) => batch.map((e) => (e.data as { n: number }).n));

describe('EsdbEventStore subscription', () => {
  let client: StandInClient;
  let subscription: Subscription | undefined;

  beforeEach(() => {
    client = new StandInClient();
  });
  afterEach(async () => {
    await subscription?.stop();
    subscription = undefined;
  });

  it('delivers what arrived during the last batch as one batch, up to maxBatchSize, in order', async () => {
    const handler = gatedHandler();
    subscription = storeWith(client).subscribeToAll({ after: START, maxBatchSize: 5, onEvents: handler.onEvents });
    await until(() => client.streams.length === 1);
    client.latest().push(raw(1));
    await until(() => handler.batches.length === 1);
    // Twelve more arrive while the first batch is handled.
    client.latest().push(...Array.from({ length: 12 }, (_, i) => raw(i + 2)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < 4; i++) {
      handler.release();
      await until(() => handler.batches.length === Math.min(i + 2, 4));
    }
    expect(numbers(handler.batches)).toEqual([[1], [2, 3, 4, 5, 6], [7, 8, 9, 10, 11], [12, 13]]);
    handler.release();
  });

  it('goes on reading while a batch is handled, holding no more than two batches', async () => {
    const handler = gatedHandler();
    subscription = storeWith(client).subscribeToAll({ after: START, maxBatchSize: 3, onEvents: handler.onEvents });
    await until(() => client.streams.length === 1);
    const stream = client.latest();
    stream.push(raw(1));
    await until(() => handler.batches.length === 1);
    stream.push(...Array.from({ length: 20 }, (_, i) => raw(i + 2)));
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The reader stopped once it held two batches; the rest waits in the stream.
    expect((stream as unknown as { queued: unknown[] }).queued.length).toBe(20 - 6);
    handler.release();
    await until(() => handler.batches.length === 2);
    expect(numbers(handler.batches)[1]).toEqual([2, 3, 4]);
    for (let i = 0; i < 10; i++) {
      handler.release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await until(() => handler.batches.flat().length === 21);
    expect(handler.batches.flat().map((e) => (e.data as { n: number }).n)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    handler.release();
  });

  it('leaves out system events, binary events and events at or before the start', async () => {
    const seen: RecordedEvent[] = [];
    subscription = storeWith(client).subscribeToAll({ after: at(2), onEvents: async (events) => void seen.push(...events) });
    await until(() => client.streams.length === 1);
    expect(client.latest().from).toEqual(at(2));
    client.latest().push(raw(1), raw(2), raw(3, { type: '$metadata' }), raw(4, { streamId: '$$order-4' }), raw(5, { isJson: false }), raw(6));
    await until(() => seen.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.map((e) => e.data)).toEqual([{ n: 6 }]);
    expect(seen[0]).toMatchObject({ streamId: 'order-6', revision: 0n, position: at(6), type: 'OrderPlaced' });
  });

  it('after a failed stream, reports it and resumes after the last event delivered, skipping what the server sends again', async () => {
    const seen: RecordedEvent[] = [];
    const errors: unknown[] = [];
    subscription = storeWith(client).subscribeToAll({
      after: START,
      onEvents: async (events) => void seen.push(...events),
      onError: (error) => errors.push(error),
    });
    await until(() => client.streams.length === 1);
    client.latest().push(raw(1), raw(2));
    await until(() => seen.length === 2);
    client.latest().fail(new Error('connection reset'));
    await until(() => client.streams.length === 2);
    expect(errors).toEqual([new Error('connection reset')]);
    expect(client.streams[0].closed).toBe(true);
    expect(client.latest().from).toEqual(at(2));
    client.latest().push(raw(2), raw(3));
    await until(() => seen.length === 3);
    expect(seen.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
  });

  it('delivers the events queued before a failure, then resumes after them', async () => {
    const handler = gatedHandler();
    subscription = storeWith(client).subscribeToAll({ after: START, maxBatchSize: 10, onEvents: handler.onEvents, onError: () => undefined });
    await until(() => client.streams.length === 1);
    client.latest().push(raw(1));
    await until(() => handler.batches.length === 1);
    client.latest().push(raw(2), raw(3));
    client.latest().fail(new Error('stream reset'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    handler.release();
    await until(() => handler.batches.length === 2);
    expect(numbers(handler.batches)).toEqual([[1], [2, 3]]);
    handler.release();
    await until(() => client.streams.length === 2);
    expect(client.latest().from).toEqual(at(3));
  });

  it('backs off from minMs, doubling to maxMs while the stream keeps failing, and starts over once a batch goes through', async () => {
    const errors: unknown[] = [];
    const seen: RecordedEvent[] = [];
    subscription = storeWith(client).subscribeToAll({ after: START, onEvents: async (events) => void seen.push(...events), onError: (e) => errors.push(e) });
    for (let i = 1; i <= 5; i++) {
      await until(() => client.streams.length === i);
      client.latest().fail(new Error(`outage ${i}`));
    }
    await until(() => client.streams.length === 6);
    const gaps = client.opened.slice(1).map((t, i) => t - client.opened[i]);
    // Lower bounds only: a busy machine may wait longer, never shorter.
    [20, 40, 80, 80, 80].forEach((least, i) => expect(gaps[i]).toBeGreaterThanOrEqual(least - 2));
    expect(gaps[4]).toBeLessThan(80 * 4);
    client.latest().push(raw(1));
    await until(() => seen.length === 1);
    client.latest().fail(new Error('outage 6'));
    await until(() => client.streams.length === 7);
    const afterSuccess = client.opened[6] - client.opened[5];
    expect(afterSuccess).toBeGreaterThanOrEqual(18);
    expect(errors).toHaveLength(6);
  });

  it('treats a stream that ends by itself as a failure, and opens it again', async () => {
    const errors: Error[] = [];
    subscription = storeWith(client).subscribeToAll({ after: START, onEvents: async () => undefined, onError: (e) => errors.push(e as Error) });
    await until(() => client.streams.length === 1);
    client.latest().end();
    await until(() => client.streams.length === 2);
    expect(errors.map((e) => e.message)).toEqual(['EventStoreDB subscription ended unexpectedly']);
  });

  it('delivers a rejected batch again, the same events, after a back-off', async () => {
    const batches: number[][] = [];
    const errors: unknown[] = [];
    let failures = 2;
    subscription = storeWith(client).subscribeToAll({
      after: START,
      onEvents: async (events) => {
        batches.push(events.map((e) => (e.data as { n: number }).n));
        if (failures-- > 0) throw new Error('database down');
      },
      onError: (error) => errors.push(error),
    });
    await until(() => client.streams.length === 1);
    client.latest().push(raw(1));
    await until(() => batches.length === 3);
    client.latest().push(raw(2));
    await until(() => batches.length === 4);
    expect(batches).toEqual([[1], [1], [1], [2]]);
    expect(errors).toHaveLength(2);
    expect(client.streams).toHaveLength(1);
  });

  it('stops: an idle subscription lets go of its stream, and a handler under way finishes first', async () => {
    const handler = gatedHandler();
    const store = storeWith(client);
    subscription = store.subscribeToAll({ after: START, onEvents: handler.onEvents });
    await until(() => client.streams.length === 1);
    client.latest().push(raw(1));
    await until(() => handler.batches.length === 1);
    let stopped = false;
    const stopping = subscription.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stopped).toBe(false);
    handler.release();
    await stopping;
    expect(client.latest().closed).toBe(true);
    subscription = undefined;
    await store.close();
  });
});

describe('EsdbEventStore reads and writes', () => {
  it('asks for the leader on appends and stream reads', async () => {
    const client = new StandInClient();
    const store = storeWith(client);
    await store.append('wallet-m1', [{ type: 'WalletOpened', data: {} }], 'no_stream');
    await store.readStream('wallet-m1', 3n);
    expect(client.calls.map((c) => [c.method, c.options.requiresLeader])).toEqual([
      ['appendToStream', true],
      ['readStream', true],
    ]);
  });

  it('fails a read that gets no complete answer within the read deadline, as an outage', async () => {
    const client = new StandInClient();
    client.streamEvents.set('order-1', 'hang');
    const failure = await storeWith(client, 30)
      .readStream('order-1', 5n)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EsdbReadDeadlineError);
    expect(isEventStoreUnavailable(failure)).toBe(true);
  });

  it('refuses a stream read from its start that lost its first events, naming the stream and the settings', async () => {
    const client = new StandInClient();
    // $maxCount 100 and a scavenge: the stream now starts at revision 100.
    client.metadata.set('wallet-m1', { maxCount: 100 });
    client.streamEvents.set('wallet-m1', [raw(1, { streamId: 'wallet-m1', revision: 100n })]);
    client.streamEvents.set('order-2', [raw(2, { streamId: 'order-2' })]);
    client.metadata.set('order-2', { cacheControl: 60, acl: { readRoles: ['$all'] } });
    const store = storeWith(client);
    const refused = await store.readStream('wallet-m1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TruncatingStreamError);
    expect((refused as Error).message).toContain('wallet-m1 has truncating metadata ($maxCount: 100), and its events before revision 100 are gone');
    // A read of the tail is not a whole history: no metadata read.
    await expect(store.readStream('wallet-m1', 100n)).resolves.toHaveLength(1);
    // A whole stream (it starts at revision 0) costs no metadata read at all.
    await store.readStreamForLoad('order-2', 0n, 10);
    await store.readStream('order-2');
    expect(client.calls.filter((c) => c.method === 'getStreamMetadata').map((c) => [c.stream, c.options.requiresLeader])).toEqual([['wallet-m1', true]]);
  });

  it('refuses a stream that lost its first events with no truncating metadata left, saying which are gone', async () => {
    const client = new StandInClient();
    client.streamEvents.set('order-3', [raw(3, { streamId: 'order-3', revision: 2n })]);
    const refused = await storeWith(client)
      .readStream('order-3')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TruncatingStreamError);
    expect((refused as Error).message).toBe(
      'EventStoreDB stream order-3: its events before revision 2 are gone: a ledger stream must keep every event. Restore the stream from a backup',
    );
  });

  it('reads single events by stream and revision, one read of one event each', async () => {
    const client = new StandInClient();
    client.streamEvents.set('wallet-a', [raw(7, { streamId: 'wallet-a', revision: 999n, metadata: { hash: 'h999' } })]);
    // Truncated below the revision asked for: the read answers a later one, which is not the event asked for.
    client.streamEvents.set('wallet-c', [raw(8, { streamId: 'wallet-c', revision: 1000n })]);
    const found = await storeWith(client).readEventsAt([
      { streamId: 'wallet-a', revision: 999n },
      { streamId: 'wallet-b', revision: 999n },
      { streamId: 'wallet-c', revision: 999n },
    ]);
    expect(found.map((e) => e && [e.streamId, e.revision, e.metadata.hash])).toEqual([['wallet-a', 999n, 'h999'], undefined, undefined]);
    expect(client.calls.map((c) => [c.method, c.stream, c.options.fromRevision, c.options.maxCount])).toEqual([
      ['readStream', 'wallet-a', 999n, 1],
      ['readStream', 'wallet-b', 999n, 1],
      ['readStream', 'wallet-c', 999n, 1],
    ]);
  });

  it('lists the truncated streams among many', async () => {
    const client = new StandInClient();
    client.metadata.set('wallet-a', { maxAge: 86_400 });
    client.metadata.set('wallet-c', { truncateBefore: 12 });
    client.metadata.set('wallet-d', { truncateBefore: 0 });
    const found = await storeWith(client).truncatedStreams(
      Array.from({ length: 40 }, (_, i) => `wallet-${String.fromCharCode(97 + (i % 26))}${i < 26 ? '' : i}`),
    );
    expect(found.map((f) => [f.streamId, f.settings])).toEqual([
      ['wallet-a', { $maxAge: 86_400 }],
      ['wallet-c', { $tb: 12 }],
    ]);
  });
});

describe('EsdbEventStore with a stream prefix (EVENTSTORE_STREAM_PREFIX)', () => {
  const prefixed = (client: StandInClient) => new EsdbEventStore(client as unknown as EsdbClient, { backoff: BACKOFF, streamPrefix: 'ledger-a/' });

  it('writes and reads its streams under the prefix, and gives them back by the names the service knows', async () => {
    const client = new StandInClient();
    client.streamEvents.set('ledger-a/wallet-m1', [raw(3, { streamId: 'ledger-a/wallet-m1' })]);
    client.streamEvents.set('ledger-a/order-9', [raw(9, { streamId: 'ledger-a/order-9', revision: 5n })]);
    client.metadata.set('ledger-a/order-9', { maxCount: 5 });
    const store = prefixed(client);
    await store.append('wallet-m1', [{ type: 'WalletOpened', data: {} }], 'no_stream');
    expect((await store.readStream('wallet-m1')).map((e) => e.streamId)).toEqual(['wallet-m1']);
    const refused = await store.readStream('order-9').catch((error: unknown) => error);
    // Named as on the server, where its metadata is.
    expect((refused as TruncatingStreamError).streamId).toBe('ledger-a/order-9');
    expect(client.calls.map((c) => [c.method, c.stream])).toEqual([
      ['appendToStream', 'ledger-a/wallet-m1'],
      ['readStream', 'ledger-a/wallet-m1'],
      ['readStream', 'ledger-a/order-9'],
      ['getStreamMetadata', 'ledger-a/order-9'],
    ]);
  });

  it("reads $all as its own streams only, paging past other ledgers' events", async () => {
    const client = new StandInClient();
    client.allEvents = [
      raw(1, { streamId: 'ledger-b/order-1' }),
      raw(2, { streamId: 'ledger-a/order-2' }),
      raw(3, { streamId: 'ledger-b/order-3' }),
      raw(4, { streamId: 'ledger-b/order-4' }),
      raw(5, { streamId: 'order-5' }),
      raw(6, { streamId: 'ledger-a/wallet-m1' }),
    ];
    const events = await prefixed(client).readAll(START, 2);
    expect(events.map((e) => [e.streamId, e.position])).toEqual([
      ['order-2', at(2)],
      ['wallet-m1', at(6)],
    ]);
    await expect(prefixed(client).readAll(at(6), 2)).resolves.toEqual([]);
  });

  it('subscribes with a server-side filter on the prefix, and gives events back by the names the service knows', async () => {
    const client = new StandInClient();
    const seen: RecordedEvent[] = [];
    const subscription = prefixed(client).subscribeToAll({ after: START, onEvents: async (events) => void seen.push(...events) });
    try {
      await until(() => client.streams.length === 1);
      expect(client.filters).toEqual([expect.objectContaining({ filterOn: 'streamName', prefixes: ['ledger-a/'] })]);
      client.latest().push(raw(1, { streamId: 'ledger-b/order-1' }), raw(2, { streamId: 'ledger-a/order-2' }));
      await until(() => seen.length === 1);
      expect(seen.map((e) => e.streamId)).toEqual(['order-2']);
    } finally {
      await subscription.stop();
    }
  });
});

describe('truncatingSettings', () => {
  it.each([
    [undefined, undefined],
    [{}, undefined],
    [{ cacheControl: 30 }, undefined],
    [{ truncateBefore: 0 }, undefined],
    [{ maxCount: 1 }, { $maxCount: 1 }],
    [{ maxAge: 60, cacheControl: 1 }, { $maxAge: 60 }],
    [
      { truncateBefore: 5, maxCount: 10 },
      { $maxCount: 10, $tb: 5 },
    ],
  ])('%j: %j', (metadata, expected) => expect(truncatingSettings(metadata)).toEqual(expected));
});
