import { randomUUID } from 'node:crypto';
import {
  ANY,
  comparePositions,
  EventStore,
  EventToAppend,
  GlobalPosition,
  NO_STREAM,
  RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from '../../src/ledger/ports/event-store.port';

export interface ContractSetup {
  store: EventStore;
  teardown(): Promise<void>;
}

const event = (type: string, data: Record<string, unknown> = {}): EventToAppend => ({ type, data });
const newStream = (prefix = 'contract') => `${prefix}-${randomUUID()}`;

/** Collects what a subscription delivers until a predicate holds. */
function collect(store: EventStore, after: GlobalPosition, until: (seen: RecordedEvent[]) => boolean, timeoutMs = 30000) {
  const seen: RecordedEvent[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const subscription = store.subscribeToAll({
    after,
    maxBatchSize: 37,
    onEvents: async (events) => {
      seen.push(...events);
      if (until(seen)) resolveDone();
    },
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`subscription saw ${seen.length} events before timing out`)), timeoutMs).unref(),
  );
  return {
    seen,
    finished: Promise.race([done, timeout]).finally(() => subscription.stop()),
  };
}

async function lastPosition(store: EventStore): Promise<GlobalPosition> {
  let position = START;
  for (;;) {
    const batch = await store.readAll(position, 1000);
    if (batch.length === 0) return position;
    position = batch[batch.length - 1].position;
  }
}

export function eventStoreContract(name: string, setup: () => Promise<ContractSetup>): void {
  describe(`event store contract: ${name}`, () => {
    let store: EventStore;
    let teardown: () => Promise<void>;

    beforeAll(async () => {
      ({ store, teardown } = await setup());
    });
    afterAll(async () => teardown());

    describe('append and read back', () => {
      it('reads a new stream back in order with revisions from 0', async () => {
        const stream = newStream();
        const result = await store.append(stream, [event('A', { n: 1 }), event('B', { n: 2, nested: { s: 'ü€' } })], NO_STREAM);
        expect(result.nextExpectedRevision).toBe(1n);

        const events = await store.readStream(stream);
        expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([
          ['A', 0n, { n: 1 }],
          ['B', 1n, { n: 2, nested: { s: 'ü€' } }],
        ]);
        expect(comparePositions(events[1].position, result.position)).toBe(0);
        expect(comparePositions(events[0].position, events[1].position)).toBeLessThan(0);
        expect(events[0].createdAt).toBeInstanceOf(Date);
      });

      it('reads single events by stream and revision, in the order asked, with their time and chain links', async () => {
        const [stream, other] = [newStream(), newStream()];
        await store.append(stream, [event('A'), { type: 'B', data: { n: 2 }, metadata: { hash: 'h1', prev_hash: 'h0', other: 1 } }, event('C')], NO_STREAM);
        const found = await store.readEventsAt([
          { streamId: stream, revision: 1n },
          { streamId: stream, revision: 5n },
          { streamId: other, revision: 0n },
          { streamId: stream, revision: 0n },
        ]);
        expect(found.map((e) => e && [e.streamId, e.revision, e.type])).toEqual([[stream, 1n, 'B'], undefined, undefined, [stream, 0n, 'A']]);
        expect(found[0]!.metadata).toMatchObject({ hash: 'h1', prev_hash: 'h0' });
        expect(found[0]!.createdAt).toBeInstanceOf(Date);
        expect(await store.readEventsAt([])).toEqual([]);
      });

      it('keeps metadata and the event id given by the writer', async () => {
        const stream = newStream();
        const id = randomUUID();
        await store.append(stream, [{ id, type: 'A', data: {}, metadata: { causation: 'x' } }], NO_STREAM);
        const [recorded] = await store.readStream(stream);
        expect(recorded.id).toBe(id);
        expect(recorded.metadata).toEqual({ causation: 'x' });
      });

      it('refuses an empty append', async () => {
        await expect(store.append(newStream(), [], NO_STREAM)).rejects.toBeInstanceOf(RangeError);
      });

      it('reads a missing stream as empty', async () => {
        expect(await store.readStream(newStream())).toEqual([]);
      });

      it('keeps numeric revision order past ten events', async () => {
        const stream = newStream();
        await store.append(
          stream,
          Array.from({ length: 12 }, (_, n) => event('N', { n })),
          NO_STREAM,
        );
        expect((await store.readStream(stream)).map((e) => e.data.n)).toEqual(Array.from({ length: 12 }, (_, n) => n));
      });

      it('reads from a given revision', async () => {
        const stream = newStream();
        await store.append(stream, [event('A'), event('B'), event('C')], NO_STREAM);
        expect((await store.readStream(stream, 1n)).map((e) => e.type)).toEqual(['B', 'C']);
      });

      it('reads at most a given number of events', async () => {
        const stream = newStream();
        await store.append(stream, [event('A'), event('B'), event('C'), event('D')], NO_STREAM);
        expect((await store.readStream(stream, 1n, 2)).map((e) => e.type)).toEqual(['B', 'C']);
        expect((await store.readStream(stream, 3n, 10)).map((e) => e.type)).toEqual(['D']);
        expect(await store.readStream(stream, 4n, 10)).toEqual([]);
      });

      it('reads a slice for a replay: the events readStream reads, each with the chain links in its metadata', async () => {
        const stream = newStream();
        const metadata = (n: number) => ({ prev_hash: `p${n}`, hash: `h${n}`, causation: 'x' });
        await store.append(
          stream,
          [0, 1, 2, 3].map((n) => ({ type: `T${n}`, data: { n, amount: '120' }, metadata: metadata(n) })),
          NO_STREAM,
        );
        await store.append(stream, [event('Unhashed', { n: 4 })], 3n);
        const whole = await store.readStream(stream);
        const replayed = await store.readStreamForReplay(stream, 1n, 3);
        expect(replayed.map((e) => [e.metadata.prev_hash, e.metadata.hash])).toEqual([
          ['p1', 'h1'],
          ['p2', 'h2'],
          ['p3', 'h3'],
        ]);
        expect(replayed.map(({ streamId, revision, position, type, data, createdAt }) => ({ streamId, revision, position, type, data, createdAt }))).toEqual(
          whole.slice(1, 4).map(({ streamId, revision, position, type, data, createdAt }) => ({ streamId, revision, position, type, data, createdAt })),
        );
        expect((await store.readStreamForReplay(stream, 3n, 10)).map((e) => [e.type, e.metadata.hash])).toEqual([
          ['T3', 'h3'],
          ['Unhashed', undefined],
        ]);
        expect(await store.readStreamForReplay(stream, 5n, 10)).toEqual([]);
      });

      /** A new stream of three events (T0 to T2) with awkward data and both chain links. */
      async function linkedStream(): Promise<string> {
        const stream = newStream();
        const data = { text: 'a "quoted" \\ line\nünïcødé ✓', nested: { list: [1, null, '2'] }, amount: '9007199254740993' };
        await store.append(
          stream,
          [0, 1, 2].map((n) => ({ type: `T${n}`, data: { ...data, n }, metadata: { prev_hash: `p${n}`, hash: `h${n}` } })),
          NO_STREAM,
        );
        return stream;
      }

      it("reads a slice for a check: each event's place, type and data as a replay reads them", async () => {
        const stream = await linkedStream();
        const replayed = await store.readStreamForReplay(stream, 1n, 5);
        const checked = await store.readStreamForCheck(stream, 1n, 5);
        expect(checked.map(({ streamId, revision, position, type, data }) => ({ streamId, revision, position, type, data }))).toEqual(
          replayed.map(({ streamId, revision, position, type, data }) => ({ streamId, revision, position, type, data })),
        );
        expect(checked.map((e) => [e.revision, e.data.n])).toEqual([
          [1n, 1],
          [2n, 2],
        ]);
        expect(await store.readStreamForCheck(stream, 3n, 5)).toEqual([]);
        expect(await store.readStreamForCheck(newStream(), 0n, 5)).toEqual([]);
      });

      it("reads a slice for a wallet's load: each event's revision, type, data and own hash as a replay reads them", async () => {
        const stream = await linkedStream();
        await store.append(stream, [event('Unhashed', { n: 3 })], 2n);
        await store.append(stream, [{ type: 'Odd', data: { n: 4 }, metadata: { hash: 7 } }], 3n);
        const replayed = await store.readStreamForReplay(stream, 1n, 10);
        const loaded = await store.readStreamForLoad(stream, 1n, 10);
        expect(loaded.map(({ streamId, revision, type, data, metadata }) => ({ streamId, revision, type, data, hash: metadata.hash }))).toEqual(
          replayed.map(({ streamId, revision, type, data, metadata }) => ({ streamId, revision, type, data, hash: metadata.hash })),
        );
        expect(loaded.map((e) => [e.revision, e.metadata.hash])).toEqual([
          [1n, 'h1'],
          [2n, 'h2'],
          [3n, undefined],
          [4n, 7],
        ]);
        expect(await store.readStreamForLoad(stream, 5n, 10)).toEqual([]);
        expect(await store.readStreamForLoad(newStream(), 0n, 10)).toEqual([]);
      });

      it('replays any type, data and links as they were appended: quotes, backslashes, unicode, nulls, a link that is not a string', async () => {
        const stream = newStream();
        const data = { text: 'a "quoted" \\ line\nünïcødé ✓', nested: { list: [1, null, '2'], empty: {} }, amount: '9007199254740993' };
        await store.append(stream, [{ type: 'Odd "type" \\', data, metadata: { hash: 7, prev_hash: { not: 'a string' } } }], NO_STREAM);
        const [replayed] = await store.readStreamForReplay(stream, 0n, 10);
        const [read] = await store.readStream(stream);
        expect({ type: replayed.type, data: replayed.data, metadata: replayed.metadata }).toEqual({
          type: 'Odd "type" \\',
          data,
          metadata: { hash: 7, prev_hash: { not: 'a string' } },
        });
        expect([replayed.revision, replayed.position, replayed.createdAt]).toEqual([read.revision, read.position, read.createdAt]);
      });

      it('reads many streams at once, in the order asked, a missing one as empty', async () => {
        const [first, missing, second] = [newStream(), newStream(), newStream()];
        await store.append(
          first,
          Array.from({ length: 11 }, (_, n) => event('N', { n })),
          NO_STREAM,
        );
        await store.append(second, [event('X'), event('Y')], NO_STREAM);
        const read = await store.readStreams([second, missing, first]);
        expect(read.map((events) => events.map((e) => e.streamId))).toEqual([[second, second], [], Array(11).fill(first)]);
        expect(read[2].map((e) => e.data.n)).toEqual(Array.from({ length: 11 }, (_, n) => n));
        expect(await store.readStreams([])).toEqual([]);
      });
    });

    describe('optimistic concurrency', () => {
      it('appends at the exact expected revision', async () => {
        const stream = newStream();
        await store.append(stream, [event('A')], NO_STREAM);
        const result = await store.append(stream, [event('B')], 0n);
        expect(result.nextExpectedRevision).toBe(1n);
      });

      it.each([
        ['no stream, but it exists', NO_STREAM],
        ['a revision behind', 0n],
        ['a revision ahead', 5n],
      ] as const)('refuses an append expecting %s', async (_, expected) => {
        const stream = newStream();
        await store.append(stream, [event('A'), event('B')], NO_STREAM);
        await expect(store.append(stream, [event('C')], expected)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('refuses an exact revision on a stream that does not exist', async () => {
        await expect(store.append(newStream(), [event('A')], 0n)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      });

      it('lets exactly one of many racing writers win each revision', async () => {
        const stream = newStream();
        const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.append(stream, [event('Claimed', { writer: i })], NO_STREAM)));
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        for (const o of outcomes) {
          if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(WrongExpectedRevisionError);
        }
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('appends with ANY whatever the revision, even under contention', async () => {
        const stream = newStream();
        await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(stream, [event('Any', { i })], ANY)));
        const events = await store.readStream(stream);
        expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
      });
    });

    describe('atomic appends to several streams (stores that offer them)', () => {
      const atomic = () => store.appendAtomically!.bind(store);
      const offered = () => typeof store.appendAtomically === 'function';

      it('appends to every stream at once, each at its own revision, in one transaction', async () => {
        if (!offered()) return expect(store.appendAtomically).toBeUndefined();
        const [a, b] = [newStream(), newStream()];
        await store.append(b, [event('B0')], NO_STREAM);
        const results = await atomic()([
          { streamId: a, events: [event('A0'), event('A1')], expected: NO_STREAM },
          { streamId: b, events: [event('B1')], expected: 0n },
        ]);
        expect(results.map((r) => r.nextExpectedRevision)).toEqual([1n, 1n]);
        expect(results[0].position.commit).toBe(results[1].position.commit);
        expect((await store.readStream(a)).map((e) => e.type)).toEqual(['A0', 'A1']);
        expect((await store.readStream(b)).map((e) => e.type)).toEqual(['B0', 'B1']);
      });

      it('appends nothing when any stream conflicts, and names that stream', async () => {
        if (!offered()) return expect(store.appendAtomically).toBeUndefined();
        const [fresh, taken] = [newStream(), newStream()];
        await store.append(taken, [event('T0')], NO_STREAM);
        const failed = atomic()([
          { streamId: fresh, events: [event('F0')], expected: NO_STREAM },
          { streamId: taken, events: [event('T1')], expected: NO_STREAM },
        ]);
        await expect(failed).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(failed).rejects.toMatchObject({ streamId: taken, actual: 0n });
        expect(await store.readStream(fresh)).toEqual([]);
        expect(await store.readStream(taken)).toHaveLength(1);
      });

      it('refuses the same stream twice in one atomic append', async () => {
        if (!offered()) return expect(store.appendAtomically).toBeUndefined();
        const stream = newStream();
        await expect(
          atomic()([
            { streamId: stream, events: [event('X')], expected: NO_STREAM },
            { streamId: stream, events: [event('Y')], expected: ANY },
          ]),
        ).rejects.toBeInstanceOf(RangeError);
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('lets exactly one of many racing atomic appends claim a shared stream, each all or nothing', async () => {
        if (!offered()) return expect(store.appendAtomically).toBeUndefined();
        const shared = newStream('shared');
        const own = Array.from({ length: 10 }, () => newStream('own'));
        const outcomes = await Promise.allSettled(
          own.map((stream, i) =>
            atomic()([
              { streamId: stream, events: [event('Mine', { i })], expected: NO_STREAM },
              { streamId: shared, events: [event('Claimed', { i })], expected: NO_STREAM },
            ]),
          ),
        );
        const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        expect(winners).toHaveLength(1);
        const claimed = await store.readStream(shared);
        expect(claimed.map((e) => e.data.i)).toEqual(winners);
        const written = await store.readStreams(own);
        expect(written.map((events) => events.length)).toEqual(own.map((_, i) => (i === winners[0] ? 1 : 0)));
      });
    });

    describe('global order and subscriptions', () => {
      it('reads all events forward from a position, exclusive', async () => {
        const before = await lastPosition(store);
        const stream = newStream();
        await store.append(stream, [event('A'), event('B'), event('C')], NO_STREAM);
        // A committed append may be read a moment later: the PostgreSQL adapter reads only below the
        // oldest transaction still open anywhere on the server (see its readAll).
        let all: RecordedEvent[] = [];
        for (const deadline = Date.now() + 10_000; all.length < 3 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
          all = (await store.readAll(before, 1000)).filter((e) => e.streamId === stream);
        }
        expect(all.map((e) => e.type)).toEqual(['A', 'B', 'C']);
        const afterFirst = (await store.readAll(all[0].position, 1000)).filter((e) => e.streamId === stream);
        expect(afterFirst.map((e) => e.type)).toEqual(['B', 'C']);
      });

      it('delivers every event of 20 concurrent appenders exactly once, in global order, to a live subscriber', async () => {
        const from = await lastPosition(store);
        const appenders = 20;
        const perAppender = 15;
        const tag = randomUUID();
        const mine = (seen: RecordedEvent[]) => seen.filter((e) => e.data.tag === tag);
        const subscriber = collect(store, from, (seen) => mine(seen).length >= appenders * perAppender);

        await Promise.all(
          Array.from({ length: appenders }, async (_, a) => {
            const stream = newStream('appender');
            for (let i = 0; i < perAppender; i += 3) {
              const batch = [i, i + 1, i + 2].map((n) => event('Appended', { tag, appender: a, n }));
              await store.append(stream, batch, i === 0 ? NO_STREAM : BigInt(i - 1));
            }
          }),
        );
        await subscriber.finished;

        const seen = subscriber.seen;
        const ids = seen.map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(mine(seen)).toHaveLength(appenders * perAppender);
        for (let i = 1; i < seen.length; i++) {
          expect(comparePositions(seen[i - 1].position, seen[i].position)).toBeLessThan(0);
        }
        // Within each stream, revisions arrive in order.
        const byAppender = new Map<unknown, number[]>();
        for (const e of mine(seen)) byAppender.set(e.data.appender, [...(byAppender.get(e.data.appender) ?? []), e.data.n as number]);
        for (const ns of byAppender.values()) expect(ns).toEqual(Array.from({ length: perAppender }, (_, i) => i));
        // The subscriber's order is the order readAll gives afterwards.
        const replay = (await store.readAll(from, 100000)).map((e) => e.id);
        expect(ids).toEqual(replay.slice(0, ids.length));
      });

      it('resumes from a checkpoint without repeating or skipping', async () => {
        const from = await lastPosition(store);
        const stream = newStream();
        await store.append(stream, [event('One'), event('Two')], NO_STREAM);

        const first = collect(store, from, (seen) => seen.some((e) => e.streamId === stream && e.type === 'Two'));
        await first.finished;
        const checkpoint = first.seen.find((e) => e.streamId === stream && e.type === 'Two')!.position;

        await store.append(stream, [event('Three'), event('Four')], 1n);
        const second = collect(store, checkpoint, (seen) => seen.some((e) => e.streamId === stream && e.type === 'Four'));
        await second.finished;
        expect(second.seen.filter((e) => e.streamId === stream).map((e) => e.type)).toEqual(['Three', 'Four']);
      });

      it('redelivers a batch whose handler failed', async () => {
        const from = await lastPosition(store);
        const stream = newStream();
        await store.append(stream, [event('Flaky')], NO_STREAM);
        let calls = 0;
        const delivered: string[] = [];
        const errors: unknown[] = [];
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no redelivery')), 15000);
          const subscription = store.subscribeToAll({
            after: from,
            onError: (e) => errors.push(e),
            onEvents: async (events) => {
              const ours = events.filter((e) => e.streamId === stream);
              if (ours.length === 0) return;
              if (++calls === 1) throw new Error('handler failed once');
              delivered.push(...ours.map((e) => e.type));
              clearTimeout(timer);
              void subscription.stop().then(resolve);
            },
          });
        });
        expect(calls).toBe(2);
        expect(delivered).toEqual(['Flaky']);
        expect(errors).toHaveLength(1);
      });
    });
  });
}
