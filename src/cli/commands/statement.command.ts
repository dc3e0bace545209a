import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { openStatement, writableSink, writeStatement } from '../../auditing';
import { fileArgument } from '../../shared/invocation-directory';
import { choiceArgument, instantArgument, merchantIdArgument, noMorePositionals } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const statementCommand: CliCommand = {
  name: 'statement',
  synopsis: 'statement MERCHANT_ID [--from ISO] [--to ISO] [--format json|csv] [--out FILE]',
  description:
    "A wallet's whole statement replayed from its events (never the read models), every line with its hash-chain link.\n" +
    '--from is inclusive, --to exclusive (recorded time). JSON by default; to stdout unless --out\n' +
    '(FILE relative to the directory the command was run in).\n' +
    'Written as it is replayed, so memory stays flat however long the wallet is.',
  options: ['from', 'to', 'format', 'out'],
  async run(args, io, context) {
    noMorePositionals(args, 1);
    const merchantId = merchantIdArgument(args.positionals[0]);
    const from = instantArgument(args.options.get('from'), 'from');
    const to = instantArgument(args.options.get('to'), 'to');
    const format = choiceArgument(args.options.get('format'), 'format', ['json', 'csv'] as const, 'json');
    const out = args.options.has('out') ? fileArgument(args.options.get('out')!, io.directory) : undefined;
    const { store } = await context();
    // No limit: the complete statement, from the wallet's first event, without snapshots.
    const statement = await openStatement(store, undefined, merchantId, { from, to });
    if (!statement) {
      io.stderr(`no wallet for merchant ${merchantId}\n`);
      return EXIT.USAGE;
    }
    if (out === undefined) {
      await writeStatement(io.stdoutStream ? writableSink(io.stdoutStream) : async (chunk) => io.stdout(chunk), format, statement);
      return EXIT.OK;
    }
    const file = createWriteStream(out);
    try {
      await once(file, 'open');
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      io.stderr(`cannot write ${out}: ${code === 'ENOENT' ? 'no such directory' : message}\n`);
      return EXIT.USAGE;
    }
    const lines = await writeStatement(writableSink(file), format, statement);
    file.end();
    await once(file, 'finish');
    io.stderr(`wrote ${lines} lines to ${out}\n`);
    return EXIT.OK;
  },
};
