import { randomUUID } from 'node:crypto';
import { CommandBus } from '@nestjs/cqrs';
import { EventStore } from '../../src/ledger/ports/event-store.port';
import { loadAggregate } from '../../src/ledger/command-handling';
import { walletStream } from '../../src/ledger/streams';
import { amountsOf, walletDecider } from '../../src/ledger/wallet/wallet.decider';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { SubmitOrderInput } from '../../src/ledger/commands/submit-order/submit-order.command';

export async function openWallet(commands: CommandBus, deposit: bigint, merchantId = `m-${randomUUID()}`): Promise<string> {
  await commands.execute(new OpenWallet(merchantId, 'USD'));
  if (deposit > 0n) await commands.execute(new DepositFunds(merchantId, `initial-${merchantId}`, deposit, 'test'));
  return merchantId;
}

export function orderInput(merchantId: string, outTradeNo: string, overrides: Partial<SubmitOrderInput> = {}): SubmitOrderInput {
  return {
    merchantId,
    outTradeNo,
    skuId: 'mlbb-86',
    accountId: '12345678',
    accountFields: { server_id: '2001' },
    amount: 120n,
    currency: 'USD',
    ...overrides,
  };
}

/** [balance, frozen, available] of a wallet, folded from its stream. */
export async function walletAmounts(store: EventStore, merchantId: string): Promise<[bigint, bigint, bigint]> {
  const { state } = await loadAggregate(store, walletStream(merchantId), walletDecider);
  const { balance, frozen } = amountsOf(state);
  return [balance, frozen, balance - frozen];
}
