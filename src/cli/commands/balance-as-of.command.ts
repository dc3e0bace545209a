import { balanceAsOf, PostgresWalletSnapshots } from '../../auditing';
import { choiceArgument, instantArgument, merchantIdArgument, noMorePositionals, positionArgument, UsageError } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const balanceAsOfCommand: CliCommand = {
  name: 'balance-as-of',
  synopsis: 'balance-as-of MERCHANT_ID [--at ISO | --position COMMIT/PREPARE] [--replay snapshots|full]',
  description:
    'The wallet as it stood at an instant (recorded time, inclusive), a global position, or now: the nearest wallet\n' +
    'snapshot before it, confirmed against the log, and the events after it. --replay full folds every event from the first instead.',
  options: ['at', 'position', 'replay'],
  async run(args, io, context) {
    noMorePositionals(args, 1);
    const merchantId = merchantIdArgument(args.positionals[0]);
    if (args.options.has('at') && args.options.has('position')) throw new UsageError('give --at or --position, not both');
    const at = instantArgument(args.options.get('at'), 'at');
    const position = positionArgument(args.options.get('position'), 'position');
    const fullReplay = choiceArgument(args.options.get('replay'), 'replay', ['snapshots', 'full'] as const, 'snapshots') === 'full';
    const { store, pool } = await context();
    const result = await balanceAsOf(store, new PostgresWalletSnapshots(pool), merchantId, { at, position }, { fullReplay });
    if (!result) {
      io.stderr(`no wallet for merchant ${merchantId}\n`);
      return EXIT.USAGE;
    }
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return EXIT.OK;
  },
};
