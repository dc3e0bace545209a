/**
 * A child process for the crash test: runs the real service and fires a
 * burst of commands, printing one ACK line per acknowledged result, until it
 * is killed. Lines are written synchronously (pipes are synchronous on Linux).
 */
import 'reflect-metadata';
import { CommandBus } from '@nestjs/cqrs';
import { loadConfig } from '../../src/config/config';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { bootstrap } from '../../src/main';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';

async function main() {
  const merchants = (process.env.BURST_MERCHANTS ?? '').split(',');
  const { config } = loadConfig(process.env);
  if (process.env.BURST_STEP_BY_STEP === 'true') {
    // As with a store that appends one stream at a time (EventStoreDB): the ledger sees no atomic appends
    // when it chooses how orders reach the log, at start-up, so orders go step by step.
    Object.defineProperty(PostgresEventStore.prototype, 'appendAtomically', { value: undefined });
  }
  const app = await bootstrap(config);
  const commands = app.get(CommandBus);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say('READY');

  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      const merchantId = merchants[i % merchants.length];
      if (i % 10 === 9) {
        const reference = `burst-deposit-${i}`;
        await commands.execute(new DepositFunds(merchantId, reference, 360n, 'burst'));
        say(`ACK deposit ${merchantId} ${reference}`);
        continue;
      }
      const result = await commands.execute(
        new SubmitOrder({
          merchantId,
          outTradeNo: `burst-${i}`,
          skuId: 'sku-1',
          accountId: `acct-${i}`,
          accountFields: {},
          amount: 120n,
          currency: 'USD',
        }),
      );
      if (result.outcome === 'refused') {
        say(`ACK submit burst-${i} ${merchantId} refused`);
        continue;
      }
      const orderNo = result.order.order.orderNo;
      say(`ACK submit ${orderNo} ${merchantId} ${result.outcome}`);
      const outcome =
        i % 3 === 0
          ? new SettleOrder(orderNo)
          : i % 3 === 1
            ? new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'The account does not exist')
            : new MarkResultUnknown(orderNo, 'timeout after sending');
      const order = await commands.execute(outcome);
      say(`ACK outcome ${orderNo} ${order.state.stage}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
