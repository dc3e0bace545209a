export const APP_CONFIG = Symbol('AppConfig');
export const PG_POOL = Symbol('PgPool');
/** The migrations the service applies at start-up; readiness checks that each is applied. */
export const MIGRATIONS = Symbol('Migrations');
