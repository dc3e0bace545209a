import { createHash } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * order_no is derived from (merchant, out_trade_no), like a UUIDv5: the same
 * pair always names the same order stream, so claiming that stream is the
 * idempotency check and needs no read model. The namespace is part of the
 * format and must never change.
 */
export function deriveOrderNo(merchantId: string, outTradeNo: string): string {
  const digest = createHash('sha256').update(`topup/order-no/v1\n${merchantId}\n${outTradeNo}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 17)) bits = (bits << 8n) | BigInt(byte);
  let text = '';
  for (let i = 0; i < 26; i++) {
    text = CROCKFORD[Number(bits & 31n)] + text;
    bits >>= 5n;
  }
  return `T${text}`;
}
