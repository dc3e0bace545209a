/** Stream ids: one function each, stable forever. */
export const walletStream = (merchantId: string) => `wallet-${merchantId}`;
export const orderStream = (orderNo: string) => `order-${orderNo}`;
/** A staff request that waits for a second person (the back office's four-eyes rule): it moves no money itself. */
export const approvalStream = (approvalId: string) => `approval-${approvalId}`;

export const WALLET_STREAM_PREFIX = 'wallet-';
export const ORDER_STREAM_PREFIX = 'order-';
export const APPROVAL_STREAM_PREFIX = 'approval-';
