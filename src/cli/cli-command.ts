import { ParsedArguments } from './cli-arguments';
import { CliContext } from './cli-context';
import { CliIo } from './progress-reporter';

export const EXIT = {
  OK: 0,
  /** verify found differences. */
  DIFFERENCES: 1,
  /** Wrong arguments, or a merchant without a wallet. */
  USAGE: 2,
  /** Postgres unreachable, the schema missing, or the command failed. */
  FAILURE: 3,
  /** Stopped by Ctrl-C (128 + SIGINT), after cleaning up. */
  INTERRUPTED: 130,
  /** The environment is invalid (as the service's own EX_CONFIG). */
  CONFIG: 78,
} as const;

/**
 * One subcommand. `run` checks its arguments before it asks for the context,
 * so a usage error never touches the database; the CLI closes the context.
 */
export interface CliCommand {
  readonly name: string;
  readonly synopsis: string;
  readonly description: string;
  readonly options: readonly string[];
  run(args: ParsedArguments, io: CliIo, context: () => Promise<CliContext>): Promise<number>;
}
