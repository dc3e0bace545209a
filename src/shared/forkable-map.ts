/** A key that a fork deleted from the map it forked off. */
const DELETED: unique symbol = Symbol('deleted');

/**
 * A string-keyed map in an aggregate's state (the wallet's holds, closed
 * holds and deposit references) that evolve treats as a value, at no cost
 * to a fold:
 *
 * - `with` and `without` return the map with the entry set or gone. They
 *   change this map and return it, so a fold of a long history writes once
 *   per event, as into a Map. Like evolve's states, a map is not read again
 *   once a later one was made from it.
 * - `fork` makes, in O(1), a map over this one that keeps its changes to
 *   itself: this map reads as before whatever the fork does. A batch of
 *   commands is decided on forks, and a batch that is not written is
 *   dropped, with nothing to undo.
 * - `settled` writes a fork's changes into the map it forked off, in
 *   O(changes), and returns it on its own: the maps and states that the
 *   fork came from are superseded.
 */
export class ForkableMap<V extends NonNullable<unknown>> implements Iterable<[string, V]> {
  private constructor(
    private readonly base: Map<string, V>,
    /** A fork's changes over `base`; undefined for a map on its own. */
    private readonly changes?: Map<string, V | typeof DELETED>,
  ) {}

  static empty<V extends NonNullable<unknown>>(): ForkableMap<V> {
    return new ForkableMap(new Map());
  }

  get(key: string): V | undefined {
    const changed = this.changes?.get(key);
    if (changed !== undefined) return changed === DELETED ? undefined : changed;
    return this.base.get(key);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  with(key: string, value: V): ForkableMap<V> {
    (this.changes ?? this.base).set(key, value);
    return this;
  }

  without(key: string): ForkableMap<V> {
    if (this.changes) this.changes.set(key, DELETED);
    else this.base.delete(key);
    return this;
  }

  get size(): number {
    if (!this.changes) return this.base.size;
    let size = this.base.size;
    for (const [key, value] of this.changes) {
      const inBase = this.base.has(key);
      if (value === DELETED && inBase) size--;
      else if (value !== DELETED && !inBase) size++;
    }
    return size;
  }

  /** Forgets every entry, in place: for a reader that keeps no history (the verification keeps open holds alone). */
  clear(): void {
    if (!this.changes) {
      this.base.clear();
      return;
    }
    for (const key of this.base.keys()) this.changes.set(key, DELETED);
    for (const key of this.changes.keys()) this.changes.set(key, DELETED);
  }

  /**
   * Forgets entries, oldest (first set) first, for as long as `forget` says
   * so of each, in place: for a state that keeps only its recent history
   * (a cached wallet's closed holds). A fork has changes to settle first.
   */
  forgetOldestWhile(forget: (value: V) => boolean): void {
    if (this.changes) throw new Error('a fork forgets nothing: settle it first');
    for (const [key, value] of this.base) {
      if (!forget(value)) return;
      this.base.delete(key);
    }
  }

  /** A fork of a fork starts with a copy of its changes (a batch decided on a batch not yet settled). */
  fork(): ForkableMap<V> {
    return new ForkableMap(this.base, new Map(this.changes));
  }

  settled(): ForkableMap<V> {
    if (!this.changes) return this;
    for (const [key, value] of this.changes) {
      if (value === DELETED) this.base.delete(key);
      else this.base.set(key, value);
    }
    return new ForkableMap(this.base);
  }

  *entries(): IterableIterator<[string, V]> {
    const { base, changes } = this;
    if (!changes) {
      yield* base;
      return;
    }
    for (const entry of base) if (!changes.has(entry[0])) yield entry;
    for (const [key, value] of changes) if (value !== DELETED) yield [key, value];
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }
}
