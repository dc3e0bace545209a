import { BroadcastChannel } from 'node:worker_threads';
import { Client, PoolConfig } from 'pg';

/** One subscriber's view of the channel: wait for a notification or a timeout. */
export class WakeUp {
  private pending = false;
  private interrupted = false;
  private resolve?: (notified: boolean) => void;

  constructor(private readonly onClose: (w: WakeUp) => void) {}

  /** Resolves true on a notification (or one already pending), false on timeout. */
  wait(ms: number): Promise<boolean> {
    if (this.interrupted) return Promise.resolve(false);
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(false), ms);
      this.resolve = (notified) => {
        clearTimeout(timer);
        this.resolve = undefined;
        resolve(notified);
      };
    });
  }

  notify(): void {
    if (this.resolve) this.settle(true);
    else this.pending = true;
  }

  /** Ends the current and every later wait at once. */
  interrupt(): void {
    this.interrupted = true;
    this.settle(false);
  }

  close(): void {
    this.interrupt();
    this.onClose(this);
  }

  private settle(notified: boolean): void {
    this.resolve?.(notified);
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/**
 * Other instances hear of new events at most this often: one small NOTIFY
 * transaction per period, whatever the load. It is a durable commit and a
 * round trip of its own, and it comes back to this process's LISTEN
 * connection too, so it is kept rare: reads after writes do not wait for it
 * (they read the stream's tail), and this instance's own subscribers are
 * woken at once; only another instance's workers start on its orders up to
 * this much later.
 */
const ANNOUNCE_EVERY_MS = 50;
/**
 * The process's other threads hear of new events at most this often: a
 * message wakes the receiving thread, and under load a message per append
 * batch cost the sender 1.8 % of its time (1.2 % at one per 10 ms), for a
 * subscriber that reads once per batch gap of the projections (20 ms)
 * anyway. The first announcement after a quiet spell goes at once.
 */
const WAKE_THREADS_EVERY_MS = 20;

/**
 * One LISTEN connection shared by all subscriptions of a store. When it is
 * lost it reconnects, backing off while the database stays away; meanwhile
 * subscribers fall back to polling. Appends announce themselves after their
 * commit (never from inside it: a NOTIFY in the appending transaction would
 * serialise every commit on Postgres's notification lock). The process's
 * other threads (the projections' thread) hear of them at once, through a
 * BroadcastChannel named after the database.
 */
export class ChangeNotifier {
  private client?: Client;
  private connecting = false;
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = RETRY_MIN_MS;
  private readonly listeners = new Set<WakeUp>();
  private announcing = false;
  private announceAgain = false;
  private threads?: BroadcastChannel;
  private threadsWokenAt = 0;
  private threadsWakeDue?: NodeJS.Timeout;

  constructor(
    private readonly connection: PoolConfig,
    private readonly channel: string,
  ) {}

  listen(): WakeUp {
    const wakeUp = new WakeUp((w) => this.listeners.delete(w));
    this.listeners.add(wakeUp);
    this.openThreadChannel();
    void this.connect();
    return wakeUp;
  }

  /**
   * New events are committed: wakes this process's subscribers at once, and
   * other instances' through a NOTIFY sent on the LISTEN connection, coalesced
   * to one per ANNOUNCE_EVERY_MS.
   */
  announce(): void {
    this.notifyAll();
    this.wakeOtherThreads();
    if (this.announcing) this.announceAgain = true;
    else this.sendAnnouncement();
  }

  private sendAnnouncement(): void {
    const client = this.client;
    if (!client) {
      // A process that only appends has not connected yet: connect, then announce. While the
      // database is away the reconnects back off, and other instances poll meanwhile.
      this.announceAgain = true;
      void this.connect();
      return;
    }
    this.announcing = true;
    this.announceAgain = false;
    const next = () => {
      setTimeout(() => {
        this.announcing = false;
        if (this.announceAgain) this.sendAnnouncement();
      }, ANNOUNCE_EVERY_MS).unref();
    };
    // A failure is the connection's: its error handler reconnects.
    client.query(`notify ${this.channel}`).then(next, next);
  }

  interrupt(): void {
    for (const listener of this.listeners) listener.interrupt();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.threadsWakeDue);
    this.threads?.close();
    this.threads = undefined;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** At once when the last wake-up is WAKE_THREADS_EVERY_MS old, else once at the end of that interval; never once closed. */
  private wakeOtherThreads(): void {
    if (this.closed || this.threadsWakeDue) return;
    this.openThreadChannel();
    const wake = () => {
      this.threadsWakeDue = undefined;
      this.threadsWokenAt = Date.now();
      this.threads?.postMessage(null);
    };
    const wait = this.threadsWokenAt + WAKE_THREADS_EVERY_MS - Date.now();
    if (wait <= 0) wake();
    else this.threadsWakeDue = setTimeout(wake, wait).unref();
  }

  /** The channel to this process's other threads on the same database; a message from one wakes the subscribers here. */
  private openThreadChannel(): void {
    if (this.threads || this.closed) return;
    const { host, port, database, connectionString } = this.connection;
    this.threads = new BroadcastChannel(`${this.channel} ${JSON.stringify({ host, port, database, connectionString })}`);
    this.threads.onmessage = () => this.notifyAll();
    // Listening must not keep a process alive that has nothing else to do.
    this.threads.unref();
  }

  private async connect(): Promise<void> {
    if (this.client || this.connecting || this.closed) return;
    this.connecting = true;
    const client = new Client(this.connection);
    // Our own announcements come back too: this process's subscribers were woken when it was sent.
    client.on('notification', (message) => {
      if (message.processId !== (client as unknown as { processID: number }).processID) this.notifyAll();
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${this.channel}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      this.retryDelayMs = RETRY_MIN_MS;
      // Anything appended while we were not listening is found by one read.
      this.notifyAll();
      if (this.announceAgain && !this.announcing) this.sendAnnouncement();
    } catch {
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    } finally {
      this.connecting = false;
    }
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryDelayMs);
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, RETRY_MAX_MS);
    this.retryTimer.unref();
  }

  private notifyAll(): void {
    for (const listener of this.listeners) listener.notify();
  }
}
