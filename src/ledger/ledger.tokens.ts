export const CLOCK = Symbol('Clock');
