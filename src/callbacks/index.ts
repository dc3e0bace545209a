/** The callbacks capability's public API: the delivery log and the rule for callback addresses, which the back office shows and checks. */
export { CallbackLog } from './callback-log';
export { refusedCallbackHost } from './delivery/address-policy';
