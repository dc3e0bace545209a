/** An error that reaches a client as the contract's failure envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
    /** More of the envelope, beside code, message and field: e.g. a rejected report's `errors`. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface FailureEnvelope {
  success: false;
  code: string;
  message: string;
  field?: string;
}

export function failureEnvelope(code: string, message: string, field?: string): FailureEnvelope {
  return field === undefined ? { success: false, code, message } : { success: false, code, message, field };
}

/** Something done as asked that will probably not work as meant, said beside the data rather than refused. */
export interface Warning {
  code: string;
  message: string;
  field?: string;
}

/**
 * A success: the route's data, and warnings only when there are some.
 * APPROVAL_REQUIRED (202, the back office): the change waits for a second
 * person's approval, and `data` is the request; nothing has moved yet.
 */
export interface SuccessEnvelope<T> {
  success: true;
  code: 'OK' | 'ACCEPTED' | 'DUPLICATE' | 'APPROVAL_REQUIRED';
  data: T;
  warnings?: Warning[];
}

/** `warnings` is in the envelope only when there are some. */
export function successEnvelope<T>(code: SuccessEnvelope<T>['code'], data: T, warnings: Warning[] = []): SuccessEnvelope<T> {
  return warnings.length === 0 ? { success: true as const, code, data } : { success: true as const, code, data, warnings };
}

/**
 * Set on a request by whoever can undo its side effects before a reply: after
 * an unexpected error the filter calls it, so the same request can be
 * retried unchanged (the gateway forgets the request's nonce).
 */
export const ON_UNEXPECTED_ERROR = Symbol('onUnexpectedError');
