/** sysexits.h: the configuration cannot work (EX_CONFIG), or a service it needs is unreachable (EX_UNAVAILABLE). */
export const EXIT_CONFIG = 78;
export const EXIT_UNAVAILABLE = 69;

/**
 * A start-up refusal an operator can act on: main prints the message alone,
 * without a stack, and exits with `exitCode`.
 */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_CONFIG,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}
