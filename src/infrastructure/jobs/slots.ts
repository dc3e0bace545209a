/** A slot taken and given back: the slots' use over time shows whether they bound the work. */
export interface SlotListener {
  taken(): void;
  released(): void;
}

/**
 * At most `size` holders at once; the others wait their turn, first come
 * first served, so a waiter is never passed over for long. A slot is given
 * back when the work holding it ends, however it ends.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(
    size: number,
    private readonly listener?: SlotListener,
  ) {
    this.free = size;
  }

  /** Runs `work` holding a slot, once one is free. */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    await this.take();
    this.listener?.taken();
    try {
      return await work();
    } finally {
      this.listener?.released();
      this.give();
    }
  }

  /** Holders waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  private take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The slot goes straight to the longest waiter, if any. */
  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
