/** A refusal that reaches the caller of a command: the API maps its code. */
export class CommandRefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandRefusedError';
  }
}
