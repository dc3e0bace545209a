/** Stream ids: one function each, stable forever. */
export const walletStream = (merchantId: string) => `wallet-${merchantId}`;
export const orderStream = (orderNo: string) => `order-${orderNo}`;

export const WALLET_STREAM_PREFIX = 'wallet-';
export const ORDER_STREAM_PREFIX = 'order-';
