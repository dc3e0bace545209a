import { ForkableMap } from './forkable-map';

const entries = (map: ForkableMap<number>) => [...map].sort();

describe('ForkableMap', () => {
  it('changes a map of its own in place, as a fold wants', () => {
    const map = ForkableMap.empty<number>();
    expect(map.with('a', 1).with('b', 2).without('a')).toBe(map);
    expect([entries(map), map.get('a'), map.has('b'), map.size]).toEqual([[['b', 2]], undefined, true, 1]);
  });

  it('keeps a fork’s changes to the fork: the map it forked off reads as before', () => {
    const base = ForkableMap.empty<number>().with('a', 1).with('b', 2);
    const fork = base.fork().with('a', 10).without('b').with('c', 3);
    expect([entries(fork), fork.size, fork.get('a'), fork.has('b')]).toEqual([
      [
        ['a', 10],
        ['c', 3],
      ],
      2,
      10,
      false,
    ]);
    expect([entries(base), base.size]).toEqual([
      [
        ['a', 1],
        ['b', 2],
      ],
      2,
    ]);
    fork.clear();
    expect([entries(fork), fork.size, entries(base)]).toEqual([
      [],
      0,
      [
        ['a', 1],
        ['b', 2],
      ],
    ]);
  });

  it('settles a fork into the map it forked off, which then reads as the fork did', () => {
    const base = ForkableMap.empty<number>().with('a', 1).with('b', 2);
    const fork = base.fork().without('a').with('b', 20).with('c', 3).with('d', 4).without('d');
    const settled = fork.settled();
    const expected = [
      ['b', 20],
      ['c', 3],
    ];
    expect([entries(settled), settled.size]).toEqual([expected, 2]);
    expect(entries(base)).toEqual(expected);
    // On its own again: its next changes are made in place.
    expect(settled.with('e', 5).get('e')).toBe(5);
    expect(settled.settled()).toBe(settled);
  });

  it('forks a fork with a copy of its changes', () => {
    const base = ForkableMap.empty<number>().with('a', 1);
    const fork = base.fork().with('b', 2);
    const forkOfFork = fork.fork().without('b').with('c', 3);
    expect(entries(fork)).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(entries(forkOfFork.settled())).toEqual([
      ['a', 1],
      ['c', 3],
    ]);
    expect([...base.keys()].sort()).toEqual(['a', 'c']);
    expect([...base.values()].sort()).toEqual([1, 3]);
  });

  it('forgets its oldest entries for as long as it is told to, and nothing of a fork', () => {
    const map = ForkableMap.empty<number>();
    for (const [key, value] of [
      ['a', 1],
      ['b', 5],
      ['c', 2],
      ['d', 9],
    ] as const)
      map.with(key, value);
    const looked: number[] = [];
    map.forgetOldestWhile((value) => (looked.push(value), value < 5));
    // Oldest first, and it stops at the first kept: c (2) is younger than b (5) and stays.
    expect([looked, entries(map)]).toEqual([
      [1, 5],
      [
        ['b', 5],
        ['c', 2],
        ['d', 9],
      ],
    ]);
    expect(() => map.fork().forgetOldestWhile(() => true)).toThrow('settle it first');
  });
});
