import { SlotTime } from './slot-time';

describe('SlotTime', () => {
  it('counts the slots held up to now, those not given back yet included', () => {
    let now = 0;
    const slots = new SlotTime(() => now);
    slots.taken();
    now = 1000;
    slots.taken();
    now = 3000;
    // Two slots, held 3 s and 2 s so far, neither given back.
    expect(slots.seconds()).toBe(5);
    expect(slots.held).toBe(2);
    slots.released();
    now = 4000;
    expect(slots.seconds()).toBe(6);
    expect(slots.held).toBe(1);
    slots.released();
    now = 10_000;
    expect(slots.seconds()).toBe(6);
    expect(slots.held).toBe(0);
  });
});
