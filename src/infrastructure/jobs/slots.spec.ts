import { Slots } from './slots';

/** A piece of work that ends when told to. */
function gate(): { work: () => Promise<string>; open: (value: string) => void; fail: (error: Error) => void } {
  let open!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { work: () => done, open, fail };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('Slots', () => {
  it('runs at most its size at once; the others wait, first come first served', async () => {
    const running: string[] = [];
    const slots = new Slots(2);
    const gates = ['a', 'b', 'c', 'd'].map((name) => ({ name, ...gate() }));
    const results = gates.map(({ name, work }) =>
      slots.hold(async () => {
        running.push(name);
        return work();
      }),
    );
    await settled();
    expect(running).toEqual(['a', 'b']);
    expect(slots.queued).toBe(2);

    gates[1].open('b done');
    await settled();
    expect(running).toEqual(['a', 'b', 'c']);
    gates[0].open('a done');
    await settled();
    expect(running).toEqual(['a', 'b', 'c', 'd']);
    expect(slots.queued).toBe(0);

    gates[2].open('c done');
    gates[3].open('d done');
    await expect(Promise.all(results)).resolves.toEqual(['a done', 'b done', 'c done', 'd done']);
  });

  it('gives the slot back when the work fails, and tells its listener each taking and giving back', async () => {
    const events: string[] = [];
    const slots = new Slots(1, { taken: () => events.push('taken'), released: () => events.push('released') });
    const failing = gate();
    const first = slots.hold(failing.work);
    const second = slots.hold(async () => 'second ran');
    await settled();
    expect(events).toEqual(['taken']);

    failing.fail(new Error('upstream down'));
    await expect(first).rejects.toThrow('upstream down');
    await expect(second).resolves.toBe('second ran');
    expect(events).toEqual(['taken', 'released', 'taken', 'released']);
    // The one slot is free again, not lost to the failure: one more runs, the next waits.
    const both = [gate(), gate()];
    const held = both.map((g) => slots.hold(g.work));
    await settled();
    expect(slots.queued).toBe(1);
    both.forEach((g) => g.open('ok'));
    await Promise.all(held);
  });
});
