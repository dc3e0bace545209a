/**
 * Started as the benchmark starts its children (processes.test.ts): prints
 * whether Node's domain module got loaded, and what a decorated constructor's
 * parameter types read as, which NestJS's injection needs.
 */
import 'reflect-metadata';

const Marked = (): ClassDecorator => () => undefined;

class Dependency {}

@Marked()
class Dependent {
  constructor(readonly dependency: Dependency) {}
}

const types = (Reflect.getMetadata('design:paramtypes', Dependent) as (new () => unknown)[]).map((type) => type.name);
process.stdout.write(
  `RUNTIME ${JSON.stringify({ domain: (process as unknown as { moduleLoadList: string[] }).moduleLoadList.some((m) => m.endsWith(' domain')), paramtypes: types })}\n`,
);
