import type { INestApplication } from '@nestjs/common';

export interface RegisteredRoute {
  method: string;
  /** The pattern as registered, e.g. /admin/v1/merchants/:merchant_id. */
  pattern: string;
}

interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
}

/** Methods an HTTP client can send; fetch refuses CONNECT, TRACE and TRACK. */
export const SENDABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Every route the running service registered, read from Express's router,
 * where Nest mounts each controller's routes and each middleware bound to a
 * path (the merchant gateway's /api/*path, registered for every method).
 * A route registered for every method is probed with the sendable ones; any
 * other route must use sendable methods only, so that none is skipped.
 */
export function registeredRoutes(app: INestApplication): RegisteredRoute[] {
  const express = app.getHttpAdapter().getInstance() as { router?: { stack: RouterLayer[] }; _router?: { stack: RouterLayer[] } };
  // Express 5 names it router; Express 4 _router.
  const stack = (express.router ?? express._router)?.stack;
  if (!stack) throw new Error("Express's router was not found: the routes cannot be listed");
  return stack.flatMap(({ route }) => {
    if (!route) return [];
    if (typeof route.path !== 'string') throw new Error(`A route whose path is not a string: ${String(route.path)}`);
    const methods = Object.keys(route.methods)
      .filter((m) => m !== '_all')
      .map((m) => m.toUpperCase());
    const everyMethod = route.methods._all === true || methods.length > SENDABLE_METHODS.length;
    const unsendable = methods.filter((m) => !SENDABLE_METHODS.includes(m));
    if (!everyMethod && unsendable.length > 0) throw new Error(`${route.path} is registered for ${unsendable.join(', ')}, which this probe cannot send`);
    return (everyMethod ? SENDABLE_METHODS : methods).map((method) => ({ method, pattern: route.path as string }));
  });
}

/** The pattern with each parameter (:name, *name) replaced by a value, and optional groups ({...}) kept. */
export function concretePath(pattern: string, value: (parameter: string) => string): string {
  return pattern.replace(/[:*]([A-Za-z0-9_]+)/g, (_, name: string) => value(name)).replace(/[{}]/g, '');
}
