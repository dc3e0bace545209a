import { ApiError } from './api-error';

/**
 * The refusals of a request body that both APIs make, worded once so that the
 * merchant API and the back office say the same thing for the same fault.
 */
export const invalidJson = (reason: string) => new ApiError(400, 'INVALID_JSON', reason);

/** `other`: the field that would have done instead (RequiredUnless). */
export const missingField = (field: string, other?: string) =>
  new ApiError(400, 'MISSING_REQUIRED_FIELD', other === undefined ? `${field} is required` : `${field} or ${other} is required`, field);

export const unknownField = (field: string) => new ApiError(422, 'VALIDATION_FAILED', `${JSON.stringify(field)} is not a field of this request`, field);
