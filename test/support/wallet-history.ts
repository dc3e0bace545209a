import { CommandBus } from '@nestjs/cqrs';
import { AdjustWallet } from '../../src/ledger/commands/adjust-wallet/adjust-wallet.command';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { WalletAdjustment } from '../../src/ledger/wallet/wallet.decider';
import { adminClient } from '../back-office/admin-client';
import { orderInput } from './fixtures';
import { provisionMerchant } from './merchant-fixture';
import { serviceOnFreshDatabase } from './service';

/**
 * Mixed movements on one wallet, 16 submits at a time: a 50.00 deposit every
 * 40 orders, and orders frozen, then deducted (one in three), released (one
 * in three) or left open; now and then a deducted order is corrected by a
 * credit (every 99th order) and a released one by a debit (every 100th). About
 * two wallet events per order.
 */
export async function buildWalletHistory(commands: CommandBus, merchantId: string, orders: number, prefix: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= orders) return;
        if (i % 40 === 0) await commands.execute(new DepositFunds(merchantId, `${prefix}-top-up-${i}`, 5_000n, 'ops'));
        const result = await commands.execute(new SubmitOrder(orderInput(merchantId, `${prefix}-${i}`, { amount: BigInt(50 + (i % 70)) })));
        if (result.outcome !== 'accepted') continue;
        const orderNo = result.order.order.orderNo;
        if (i % 3 === 0) await commands.execute(new SettleOrder(orderNo));
        if (i % 3 === 1) await commands.execute(new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'no such account'));
        if (i % 99 === 0) await commands.execute(new AdjustWallet(merchantId, correction(`${prefix}-adj-${i}`, 'credit', 25n, orderNo), 'finance'));
        if (i % 100 === 1) await commands.execute(new AdjustWallet(merchantId, correction(`${prefix}-adj-${i}`, 'debit', 10n, orderNo), 'finance'));
      }
    }),
  );
}

/** A correction of a final order that the upstream's report contradicts. */
function correction(reference: string, direction: 'credit' | 'debit', amount: bigint, orderNo: string): WalletAdjustment {
  const reason = direction === 'credit' ? 'REPORT_SAYS_FAILED' : 'REPORT_SAYS_DELIVERED';
  return { reference, direction, amount, reason, note: 'the upstream report disagrees', orderNo };
}

/** A service on a fresh database, an auditor, and a merchant whose wallet has `orders` orders' worth of history, all projected. */
export async function auditedWallet(orders: number, prefix: string) {
  const { service, teardown } = await serviceOnFreshDatabase();
  const merchant = await provisionMerchant(service, { deposit: 100_000n });
  const admin = adminClient(service.url);
  const auditor = await admin.createStaff('auditor');
  await buildWalletHistory(service.commands, merchant.merchantId, orders, prefix);
  await service.catchUp();
  return { service, teardown, merchant, admin, auditor };
}
