import { ConfigError } from '../config/config';
import { parseArguments, UsageError } from './cli-arguments';
import { CliCommand, EXIT } from './cli-command';
import { CliContext, EnvironmentError, openCliContext } from './cli-context';
import { balanceAsOfCommand } from './commands/balance-as-of.command';
import { rebuildCommand } from './commands/rebuild.command';
import { rebuildApprovalsCommand } from './commands/rebuild-approvals.command';
import { resealSecretsCommand } from './commands/reseal-secrets.command';
import { statementCommand } from './commands/statement.command';
import { verifyCommand } from './commands/verify.command';
import { CliIo } from './progress-reporter';
import { invocationDirectory } from '../shared/invocation-directory';
import { EXIT_CONFIG, StartupError } from '../shared/startup-error';

/**
 * The operators' and auditors' CLI: `npm run cli -- <command>`, or
 * `node -r ts-node/register/transpile-only src/cli/main.ts <command>`.
 * It reads the service's environment and talks to the same database and
 * event store, alongside a running service or without one.
 */

const COMMANDS: readonly CliCommand[] = [verifyCommand, rebuildCommand, statementCommand, balanceAsOfCommand, resealSecretsCommand, rebuildApprovalsCommand];

function usage(): string {
  return [
    'usage: cli <command> [arguments]',
    '',
    ...COMMANDS.map((c) => `  ${c.synopsis}`),
    '  help [COMMAND]',
    '',
    'Reads the service environment (EVENT_STORE, EVENTSTORE_CONNECTION_STRING; SECRETS_KEY and SECRETS_KEY_PREVIOUS for',
    'reseal-secrets) and finds the database as `npm start` does: DATABASE_URL, else PG*, else a Postgres answering on',
    '127.0.0.1:5432, else the embedded PostgreSQL `npm start` set up in DATA_DIR (default .data). Needs the schema the',
    'service creates. Says on stderr which database it uses; file names are taken from the directory it was run in.',
    'Results go to stdout, progress and notes to stderr.',
    'Exit codes: 0 done (verify: clean), 1 verify found differences, 2 usage error or unknown merchant, 3 failure,',
    '130 interrupted (rebuild cleans up first), 78 invalid environment.',
    '',
  ].join('\n');
}

function commandHelp(command: CliCommand): string {
  return `usage: cli ${command.synopsis}\n\n${command.description}\n`;
}

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv, given: CliIo): Promise<number> {
  const io: CliIo = { ...given, directory: given.directory ?? invocationDirectory(env) };
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(usage());
    return EXIT.USAGE;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    const about = COMMANDS.find((c) => c.name === rest[0]);
    if (rest.length > 0 && !about) return usageError(io, `unknown command ${JSON.stringify(rest[0])}`);
    io.stdout(about ? commandHelp(about) : usage());
    return EXIT.OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) return usageError(io, `unknown command ${JSON.stringify(name)}`);

  let opened: Promise<CliContext> | undefined;
  try {
    const args = parseArguments(rest, command.options);
    if (args.help) {
      io.stdout(commandHelp(command));
      return EXIT.OK;
    }
    return await command.run(args, io, () => (opened ??= openCliContext(env, (line) => io.stderr(`${line}\n`))));
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error.message, command);
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      return EXIT.CONFIG;
    }
    if (error instanceof StartupError) {
      io.stderr(`${error.message}\n`);
      return error.exitCode === EXIT_CONFIG ? EXIT.CONFIG : EXIT.FAILURE;
    }
    io.stderr(error instanceof EnvironmentError ? `${error.message}\n` : `${command.name} failed: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT.FAILURE;
  } finally {
    if (opened) await opened.then((c) => c.close()).catch(() => undefined);
  }
}

function usageError(io: CliIo, message: string, command?: CliCommand): number {
  io.stderr(`error: ${message}\n\n${command ? commandHelp(command) : usage()}`);
  return EXIT.USAGE;
}

if (require.main === module) {
  const io: CliIo = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text), stdoutStream: process.stdout };
  runCli(process.argv.slice(2), process.env, io).then(
    (code) => {
      // Let stdout drain (it may be a pipe) before the exit code is set.
      process.exitCode = code;
    },
    (error) => {
      console.error(error);
      process.exitCode = EXIT.FAILURE;
    },
  );
}
