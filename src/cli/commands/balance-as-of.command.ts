import { balanceAsOf } from '../../auditing/wallet-statement';
import { instantArgument, merchantIdArgument, noMorePositionals, positionArgument, UsageError } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const balanceAsOfCommand: CliCommand = {
  name: 'balance-as-of',
  synopsis: 'balance-as-of MERCHANT_ID [--at ISO | --position COMMIT/PREPARE]',
  description: 'The wallet as it stood at an instant (recorded time, inclusive) or a global position, or now, folded from its events.',
  options: ['at', 'position'],
  async run(args, io, context) {
    noMorePositionals(args, 1);
    const merchantId = merchantIdArgument(args.positionals[0]);
    if (args.options.has('at') && args.options.has('position')) throw new UsageError('give --at or --position, not both');
    const at = instantArgument(args.options.get('at'), 'at');
    const position = positionArgument(args.options.get('position'), 'position');
    const { store } = await context();
    const result = await balanceAsOf(store, merchantId, { at, position });
    if (!result) {
      io.stderr(`no wallet for merchant ${merchantId}\n`);
      return EXIT.USAGE;
    }
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return EXIT.OK;
  },
};
