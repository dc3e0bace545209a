import { IncomingMessage, ServerResponse } from 'node:http';

/** The part of an express application that gives requests and replies their methods. */
export interface ExpressPrototypes {
  readonly request: object;
  readonly response: object;
}

/** createServer's options that choose the classes of a request and of its reply. */
export interface MessageClasses {
  IncomingMessage?: typeof IncomingMessage;
  ServerResponse?: typeof ServerResponse;
}

type Constructor = (this: object, first: unknown, second?: unknown) => void;

/**
 * Node's request and reply built on express's prototypes from the start.
 * Express otherwise moves each request and reply onto them
 * (Object.setPrototypeOf in app.handle), and V8 then kept the objects of
 * every request alive through two young-generation collections, copying
 * and promoting them: with 64 MB semi-spaces each collection stopped the
 * service for 15 to 25 ms under load. Express's own call then finds the
 * prototype already in place and changes nothing.
 *
 * Node's constructors are plain functions, called here on the new object
 * as a subclass's constructor would. Were they ever classes, Node's own are
 * kept and express moves the prototypes as before.
 */
export function messagesOnExpressPrototypes(app: ExpressPrototypes, node: Required<MessageClasses> = { IncomingMessage, ServerResponse }): MessageClasses {
  if (isClass(node.IncomingMessage) || isClass(node.ServerResponse)) return {};
  const Request = onPrototype(node.IncomingMessage as unknown as Constructor, app.request);
  const Response = onPrototype(node.ServerResponse as unknown as Constructor, app.response);
  return { IncomingMessage: Request as unknown as typeof IncomingMessage, ServerResponse: Response as unknown as typeof ServerResponse };
}

function onPrototype(base: Constructor, prototype: object): Constructor {
  const construct = function (this: object, first: unknown, second?: unknown) {
    base.call(this, first, second);
  } as Constructor & { prototype: object };
  construct.prototype = prototype;
  return construct;
}

const isClass = (constructor: unknown): boolean => /^class\b/.test(Function.prototype.toString.call(constructor));
