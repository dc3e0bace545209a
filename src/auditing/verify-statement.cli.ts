/**
 * Offline check of an exported wallet statement, for auditors:
 *
 *   npm run verify-statement -- statement.json      (or .csv; "-" reads stdin)
 *
 * The JSON may be the service's whole reply or only its `data`. Prints "OK:
 * N lines, revisions A..B, chain intact, last hash H" and exits 0, or prints
 * every problem found and exits 1: "line 8 (revision 6): ALTERED: ..." names
 * the line of a CSV file, "data.lines[6] (revision 6): ..." the place in the
 * JSON. Exits 2 on a usage error or a file it cannot read. Needs no database,
 * no network and no configuration.
 */
import { readFileSync } from 'node:fs';
import { fileArgument } from '../shared/invocation-directory';
import { checkStatement, CheckReport, lineLabel, StatementProblem } from './statement-check/check-statement';

const USAGE = [
  'usage: npm run verify-statement -- FILE',
  '       (FILE is a statement exported as JSON or CSV, as the service gave it, relative to the directory you ran',
  '       the command in; "-" reads it from stdin)',
  'exit status: 0 chain intact, 1 problems found, 2 usage error or unreadable file',
].join('\n');

/** Files with more lines than this show progress on stderr. */
const PROGRESS_ABOVE = 10_000;

export function formatReport(report: CheckReport): string[] {
  const where = (p: StatementProblem) => `${lineLabel(report, p.line)}${p.revision !== undefined ? ` (revision ${p.revision})` : ''}`;
  const out: string[] = [];
  if (report.ok) {
    out.push(
      report.lines === 0
        ? 'OK: 0 lines (the statement is empty), nothing to check'
        : `OK: ${report.lines} line${report.lines === 1 ? '' : 's'}, revisions ${report.firstRevision}..${report.lastRevision}, chain intact, last hash ${report.lastHash}`,
    );
  } else {
    for (const p of report.problems) {
      out.push(`${p.line === 0 ? 'file' : where(p)}: ${p.kind}: ${p.message}`);
    }
    const first = report.problems[0];
    const n = report.problems.length;
    out.push(
      `FAILED: ${n} problem${n === 1 ? '' : 's'} in ${report.lines} line${report.lines === 1 ? '' : 's'}` +
        (first && first.line > 0 ? `; the first is at ${where(first)}` : ''),
    );
  }
  for (const note of report.notes) out.push(`note: ${note}`);
  return out;
}

export function main(argv: string[]): number {
  const args = argv.filter((a) => a !== '--');
  if (args.length !== 1 || args[0] === '-h' || args[0] === '--help') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // Relative to the directory the user ran `npm run` in, not the package's root.
  const file = args[0] === '-' ? '-' : fileArgument(args[0]);
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : message;
    process.stderr.write(`verify-statement: cannot read ${file === '-' ? 'stdin' : file}: ${reason}\n${USAGE}\n`);
    return 2;
  }
  const report = checkStatement(text, {
    progressEvery: PROGRESS_ABOVE,
    onProgress: (checked, total) => {
      if (total > PROGRESS_ABOVE) process.stderr.write(`verify-statement: checked ${checked} of ${total} lines\n`);
    },
  });
  process.stdout.write(`${formatReport(report).join('\n')}\n`);
  return report.ok ? 0 : 1;
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
