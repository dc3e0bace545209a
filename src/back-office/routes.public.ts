/**
 * Where the back office is mounted, written once: its controllers are under
 * it (back-office-controller.decorator.ts) and the OpenAPI document describes
 * its routes there.
 */
export const BACK_OFFICE_PREFIX = '/admin/v1';

/** A route under the back office's prefix: `adminPath('merchants/{merchant_id}')`. */
export const adminPath = (route: string) => `${BACK_OFFICE_PREFIX}/${route}`;
