export const APP_CONFIG = Symbol('AppConfig');
export const PG_POOL = Symbol('PgPool');
