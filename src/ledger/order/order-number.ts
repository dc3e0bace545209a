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
  // The low 130 bits of the digest's first 17 bytes (big-endian), five bits
  // a character, most significant first: read from the bytes directly, as
  // a BigInt of them costs more than the hash.
  let text = 'T';
  for (let i = 25; i >= 0; i--) {
    const bit = 5 * i;
    const byte = 16 - (bit >> 3);
    const window = (byte > 0 ? digest[byte - 1] << 8 : 0) | digest[byte];
    text += CROCKFORD[(window >> (bit & 7)) & 31];
  }
  return text;
}
