import { allProjections } from '../../../projections/all-projections';
import { rebuildProjection, RebuildReport } from '../../../projections/rebuild';
import { formatPosition } from '../../ledger/ports/event-store.port';
import { choiceArgument, integerArgument, noMorePositionals } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';
import { DEFAULT_PROGRESS_EVERY, progressReporter } from '../progress-reporter';

const NAMES = allProjections.map((p) => p.name);

export const rebuildCommand: CliCommand = {
  name: 'rebuild',
  synopsis: `rebuild [--projection ${NAMES.join('|')}] [--progress-every N]`,
  description:
    'Replays the log into fresh tables and swaps them in, one projection after the other (all by default).\n' +
    'Online: a running service keeps answering from the old tables until the swap. Ctrl-C aborts and drops the half-built tables.',
  options: ['projection', 'progress-every'],
  async run(args, io, context) {
    noMorePositionals(args, 0);
    const only = args.options.has('projection') ? choiceArgument(args.options.get('projection'), 'projection', NAMES, NAMES[0]) : undefined;
    const every = integerArgument(args.options.get('progress-every'), 'progress-every', 1, DEFAULT_PROGRESS_EVERY);
    const { pool, store } = await context();

    // Stop at the next batch rather than die mid-replay: rebuildProjection then drops its tables.
    let interrupted: string | undefined;
    const interrupt = (signal: string) => () => (interrupted = signal);
    const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => [signal, interrupt(signal)] as const);
    for (const [signal, handler] of handlers) process.once(signal, handler);
    const reports: RebuildReport[] = [];
    const printReports = () =>
      io.stdout(
        `${JSON.stringify(
          reports.map((r) => ({ projection: r.projection, events: r.events, position: formatPosition(r.position) })),
          null,
          2,
        )}\n`,
      );
    try {
      for (const projection of allProjections.filter((p) => only === undefined || p.name === only)) {
        const progress = progressReporter(io, `rebuild ${projection.name}`, every);
        const report = await rebuildProjection(pool, store, projection, (events) => {
          if (interrupted) throw new Error(`interrupted by ${interrupted}`);
          progress.update(events);
        }).catch((error: unknown) => {
          if (!interrupted) throw error;
          return undefined;
        });
        if (!report) {
          io.stderr(`rebuild ${projection.name}: interrupted by ${interrupted}; its half-built tables were dropped, the live ones are untouched\n`);
          printReports();
          return EXIT.INTERRUPTED;
        }
        progress.finish(report.events, `swapped in at ${formatPosition(report.position)}`);
        reports.push(report);
      }
    } finally {
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    }
    printReports();
    return EXIT.OK;
  },
};
