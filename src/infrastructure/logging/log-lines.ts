/**
 * The log's way out: lines written in one turn of the event loop leave in one
 * write to stdout at the end of that turn's I/O (setImmediate), instead of one
 * write per line. Every request writes an access line, and on a busy process
 * each write(2) to a pipe costs a system call and wakes the reader: one per
 * request was over a quarter of the service's system calls under load.
 *
 * Only routine lines wait ('log' level, on stdout). A warning or an error is
 * written at once, after the lines before it, so the last words before a crash
 * are never held back; a normal exit (process.exit included) writes what is
 * pending. A process killed outright (SIGKILL) can lose the lines of its last
 * turn, access lines of replies already sent; the ledger is never in a log.
 * Nest ends a graceful stop by raising the signal again, which skips 'exit':
 * from the stop signal on, main.ts has every line written at once.
 */
export type LogStream = 'stdout' | 'stderr';

/** Beyond this many characters pending, they are written at once: a burst in one turn does not grow memory. */
const MAX_PENDING_CHARS = 64 * 1024;

class LogLines {
  private pending: string[] = [];
  private pendingChars = 0;
  private scheduled = false;
  private exitHooked = false;
  private writeThrough = false;
  private readonly flushNow = () => this.flush();

  /** A routine line: written with the others of this turn. */
  later(line: string): void {
    if (this.writeThrough) {
      process.stdout.write(line);
      return;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars >= MAX_PENDING_CHARS) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
    if (!this.exitHooked) {
      this.exitHooked = true;
      process.on('exit', this.flushNow);
    }
  }

  /** A line that must not wait (a warning, an error): the pending lines first, then it. */
  now(stream: LogStream, line: string): void {
    this.flush();
    process[stream].write(line);
  }

  /** From now on every line is written at once: the process is stopping, and may end without 'exit'. */
  stopBuffering(): void {
    this.writeThrough = true;
    this.flush();
  }

  /** Writes the pending lines, in the order they came. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    process.stdout.write(text);
  }
}

/** One per process, as stdout is. */
export const logLines = new LogLines();
