import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { DtoBodyPipe, DtoClass } from '../infrastructure/http/dto-body-pipe';

/** A route as Nest mounts it, in the documents' terms: its method, its path template and the DTO its body is validated against. */
export interface NestRoute {
  /** Lower case, as OpenAPI keys operations. */
  readonly method: string;
  /** `/admin/v1/merchants/{merchant_id}`. */
  readonly path: string;
  /** Where the handler is, for a problem to name. */
  readonly handler: string;
  readonly body?: { readonly dto: DtoClass; readonly pipe: DtoBodyPipe };
}

type Controller = new (...args: never[]) => object;
type RouteArgument = { index: number; pipes?: unknown[] };

/** Every route of these controllers, read from the metadata Nest mounts them by. */
export function nestRoutes(controllers: readonly Controller[]): NestRoute[] {
  return controllers.flatMap((controller) => {
    const prefixes = paths(Reflect.getMetadata(PATH_METADATA, controller));
    const prototype = controller.prototype as Record<string, unknown>;
    return methodNames(prototype).flatMap((name) => {
      const handler = prototype[name] as object;
      const suffixes = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (suffixes === undefined || method === undefined) return [];
      const body = bodyOf(controller, name);
      return prefixes.flatMap((prefix) =>
        paths(suffixes).map((suffix) => ({
          method: RequestMethod[method].toLowerCase(),
          path: template(prefix, suffix),
          handler: `${controller.name}.${name}`,
          ...(body ? { body } : {}),
        })),
      );
    });
  });
}

const paths = (value: string | string[] | undefined): string[] => (Array.isArray(value) ? value : [value ?? '']);

function methodNames(prototype: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p))
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(p, name)?.value === 'function') names.add(name);
  }
  return [...names];
}

/** `/` + the controller's and the handler's paths, with `:name` written `{name}`. */
const template = (prefix: string, suffix: string) =>
  `/${[prefix, suffix]
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/')}`.replace(/:(\w+)/g, '{$1}');

/** The DTO a DtoBodyPipe validates one of the handler's parameters against, and that pipe. */
function bodyOf(controller: Controller, name: string): NestRoute['body'] {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, RouteArgument>;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, name) ?? []) as unknown[];
  for (const { index, pipes = [] } of Object.values(args)) {
    for (const pipe of pipes) {
      const instance =
        pipe instanceof DtoBodyPipe
          ? pipe
          : typeof pipe === 'function' && pipe.prototype instanceof DtoBodyPipe
            ? new (pipe as new () => DtoBodyPipe)()
            : undefined;
      if (instance) return { dto: types[index] as DtoClass, pipe: instance };
    }
  }
  return undefined;
}
