/**
 * The callbacks capability's public API: the delivery log and the rule for
 * callback addresses, which the back office shows and checks, and the
 * delivery tables, which the schema (src/schema.ts) creates.
 */
export { CallbackLog } from './callback-log';
export type { CallbackAttemptView, CallbackLogView } from './callback-log';
export { callbackMigrations } from './callbacks.migrations';
export { refusedCallbackHost } from './delivery/address-policy';
