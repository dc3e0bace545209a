import { createHash } from 'node:crypto';
import { deriveOrderNo } from './order-number';

describe('deriveOrderNo', () => {
  // Order numbers already issued must never change: these were derived by the first implementation.
  it.each([
    ['mch_1', 'OUT-1', 'T2XMZP05R6RMQX4HFXFE8BR450X'],
    ['mch_demo', 'order:2026-11-26/1', 'TP4ZFP0PCDPDTQRCGKCZVQHBYW5'],
    ['m', '', 'T5KS3CZ5WM0VXANXWR2MD7XCZYA'],
  ])('(%s, %s) is %s', (merchantId, outTradeNo, orderNo) => {
    expect(deriveOrderNo(merchantId, outTradeNo)).toBe(orderNo);
  });

  it("is the digest's first 17 bytes as a number, its low 130 bits in Crockford base32", () => {
    const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    for (let n = 0; n < 2_000; n++) {
      const [merchantId, outTradeNo] = [`mch_${n % 37}`, `OUT-${n}-${'x'.repeat(n % 64)}`];
      const digest = createHash('sha256').update(`topup/order-no/v1\n${merchantId}\n${outTradeNo}`).digest();
      let value = BigInt(`0x${digest.subarray(0, 17).toString('hex')}`);
      let text = '';
      for (let i = 0; i < 26; i++, value >>= 5n) text = CROCKFORD[Number(value & 31n)] + text;
      expect(deriveOrderNo(merchantId, outTradeNo)).toBe(`T${text}`);
    }
  });
});
