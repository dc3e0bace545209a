export const CLOCK = Symbol('Clock');
/** How orders reach the log: one atomic append or step by step (OrderAppends), chosen once by the store. */
export const ORDER_APPENDS = Symbol('OrderAppends');
