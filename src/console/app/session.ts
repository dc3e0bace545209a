import type { ConsoleSessionView, StaffRole } from './replies';

/** Who is signed in in this tab, as the service said; null until it has, and after sign-out or a 401. */
let current: ConsoleSessionView | null = null;

export const currentSession = () => current;

export function setSession(session: ConsoleSessionView | null) {
  current = session;
}

/** Whether the signed-in role may see a page or an action: an administrator may do everything. The API decides anyway. */
export const may = (...roles: StaffRole[]): boolean => current !== null && (current.role === 'admin' || roles.includes(current.role));
