import { verifyReadModels, WalletNotFoundError } from '../../auditing';
import { choiceArgument, integerArgument, merchantIdArgument, noMorePositionals, UsageError } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';
import { DEFAULT_PROGRESS_EVERY, progressReporter } from '../progress-reporter';

export const verifyCommand: CliCommand = {
  name: 'verify',
  synopsis: 'verify [--merchant MERCHANT_ID [--scope merchant|wallet]] [--progress-every N]',
  description:
    'Replays the log (or one wallet and its orders; --scope wallet: the wallet alone) and compares it with the read\n' +
    'models up to their checkpoints.\n' +
    'Prints the report as JSON; exits 0 when clean, 1 when it found differences.',
  options: ['merchant', 'scope', 'progress-every'],
  async run(args, io, context) {
    noMorePositionals(args, 0);
    const raw = args.options.get('merchant');
    const merchantId = raw === undefined ? undefined : merchantIdArgument(raw, '--merchant');
    if (args.options.has('scope') && merchantId === undefined) throw new UsageError('--scope needs --merchant');
    const scope = choiceArgument(args.options.get('scope'), 'scope', ['merchant', 'wallet'] as const, 'merchant');
    const every = integerArgument(args.options.get('progress-every'), 'progress-every', 1, DEFAULT_PROGRESS_EVERY);
    const { pool, store } = await context();
    const progress = progressReporter(io, 'verify', every);
    try {
      const report = await verifyReadModels(pool, store, { merchantId, scope, onProgress: (n) => progress.update(n) });
      io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      const verdict = report.clean
        ? `clean up to ${report.last_position}`
        : `${report.differences_total} difference(s)${report.differences_total > report.differences.length ? `, first ${report.differences.length} listed` : ''}`;
      progress.finish(report.events_checked, verdict);
      return report.clean ? EXIT.OK : EXIT.DIFFERENCES;
    } catch (error) {
      if (!(error instanceof WalletNotFoundError)) throw error;
      io.stderr(`${error.message}\n`);
      return EXIT.USAGE;
    }
  },
};
