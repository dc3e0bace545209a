import { SlotListener } from '../jobs/slots';

/**
 * Slots held over time, integrated as they are taken and given back (the
 * listener of the fulfilment worker's upstream Slots): the slot-seconds up to any moment count the
 * slots still held, so the mean over a span shorter than a job (a
 * heartbeat's, a scrape interval's) is right, where a count added at each
 * release would jump when long jobs end.
 */
export class SlotTime implements SlotListener {
  private heldNow = 0;
  private slotSeconds = 0;
  private since: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.since = now();
  }

  taken(): void {
    this.advance();
    this.heldNow++;
  }

  released(): void {
    this.advance();
    this.heldNow--;
  }

  /** Slots held now. */
  get held(): number {
    return this.heldNow;
  }

  /** Slot-seconds so far, the slots held now counted up to now. */
  seconds(): number {
    this.advance();
    return this.slotSeconds;
  }

  private advance(): void {
    const now = this.now();
    this.slotSeconds += (this.heldNow * (now - this.since)) / 1000;
    this.since = now;
  }
}
