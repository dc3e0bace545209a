import { GlobalPosition, parsePosition } from '../ledger/ports/event-store.port';
import { parseInstant } from '../shared/clock';
import { IDENTIFIER, IDENTIFIER_RULE } from '../shared/limits';

/** Wrong arguments: the CLI prints the message and the command's usage, and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ParsedArguments {
  positionals: string[];
  options: Map<string, string>;
  help: boolean;
}

/**
 * `--name value` or `--name=value` for the options a command declares,
 * anything else positional; `--help` anywhere asks for the command's usage.
 */
export function parseArguments(argv: readonly string[], declared: readonly string[]): ParsedArguments {
  const parsed: ParsedArguments = { positionals: [], options: new Map(), help: false };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === '--help' || token === '-h') {
      parsed.help = true;
      continue;
    }
    if (!token.startsWith('--')) {
      parsed.positionals.push(token);
      continue;
    }
    const equals = token.indexOf('=');
    const name = token.slice(2, equals < 0 ? undefined : equals);
    if (!declared.includes(name)) throw new UsageError(`unknown option --${name}`);
    if (parsed.options.has(name)) throw new UsageError(`--${name} given twice`);
    const value = equals < 0 ? argv[++i] : token.slice(equals + 1);
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    parsed.options.set(name, value);
  }
  return parsed;
}

export function merchantIdArgument(raw: string | undefined, what = 'MERCHANT_ID'): string {
  if (raw === undefined) throw new UsageError(`${what} is required`);
  if (!IDENTIFIER.test(raw)) throw new UsageError(`${what} must be ${IDENTIFIER_RULE}`);
  return raw;
}

/** ISO 8601 with an offset, as the back office takes it: a bare local time would be ambiguous. */
export function instantArgument(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const date = parseInstant(raw);
  if (!date) throw new UsageError(`--${name} must be an ISO 8601 time with an offset, e.g. 2026-11-22T10:00:00Z`);
  return date;
}

export function positionArgument(raw: string | undefined, name: string): GlobalPosition | undefined {
  if (raw === undefined) return undefined;
  try {
    return parsePosition(raw);
  } catch {
    throw new UsageError(`--${name} must be a global position like 1234/56`);
  }
}

export function integerArgument(raw: string | undefined, name: string, min: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = /^\d{1,12}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min)) throw new UsageError(`--${name} must be an integer of at least ${min}`);
  return value;
}

export function choiceArgument<T extends string>(raw: string | undefined, name: string, choices: readonly T[], fallback: T): T {
  if (raw === undefined) return fallback;
  if (!choices.includes(raw as T)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}`);
  return raw as T;
}

export function noMorePositionals(args: ParsedArguments, expected: number): void {
  if (args.positionals.length > expected) throw new UsageError(`unexpected argument ${JSON.stringify(args.positionals[expected])}`);
}
