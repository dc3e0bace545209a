import { writeFile } from 'node:fs/promises';
import { statementCsv, walletStatement } from '../../auditing/wallet-statement';
import { choiceArgument, instantArgument, merchantIdArgument, noMorePositionals } from '../cli-arguments';
import { CliCommand, EXIT } from '../cli-command';

export const statementCommand: CliCommand = {
  name: 'statement',
  synopsis: 'statement MERCHANT_ID [--from ISO] [--to ISO] [--format json|csv] [--out FILE]',
  description:
    "A wallet's statement replayed from its events (never the read models), every line with its hash-chain link.\n" +
    '--from is inclusive, --to exclusive (recorded time). JSON by default; to stdout unless --out.',
  options: ['from', 'to', 'format', 'out'],
  async run(args, io, context) {
    noMorePositionals(args, 1);
    const merchantId = merchantIdArgument(args.positionals[0]);
    const from = instantArgument(args.options.get('from'), 'from');
    const to = instantArgument(args.options.get('to'), 'to');
    const format = choiceArgument(args.options.get('format'), 'format', ['json', 'csv'] as const, 'json');
    const out = args.options.get('out');
    const { store } = await context();
    // One replay of the whole stream: no paging, so the file is the complete statement.
    const statement = await walletStatement(store, merchantId, { from, to, limit: Number.MAX_SAFE_INTEGER });
    if (!statement) {
      io.stderr(`no wallet for merchant ${merchantId}\n`);
      return EXIT.USAGE;
    }
    const text = format === 'csv' ? statementCsv(statement) : `${JSON.stringify(statement, null, 2)}\n`;
    if (out === undefined) {
      io.stdout(text);
    } else {
      await writeFile(out, text);
      io.stderr(`wrote ${statement.lines.length} lines to ${out}\n`);
    }
    return EXIT.OK;
  },
};
