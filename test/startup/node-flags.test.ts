import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS, TYPESCRIPT_LOADER } from '../support/service-node-flags';

const ROOT = join(__dirname, '../..');

/** The flags before the script in a `node ...` command line. */
function nodeFlags(commandLine: readonly string[]): string[] {
  expect(commandLine[0]).toBe('node');
  return commandLine.slice(1).filter((arg) => arg.startsWith('--'));
}

describe('Node flags of the service', () => {
  // The tests and the benchmark run the service as production does: a flag in one place and not the other would skew them.
  it('are the same for npm start, npm run start:prod, the image, the tests and the benchmark', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    expect(cmd).not.toBeNull();
    const commandLines = [scripts.start.split(' '), scripts['start:prod'].split(' '), JSON.parse(cmd![1]) as string[]];
    expect(SERVICE_NODE_FLAGS.length).toBeGreaterThan(0);
    for (const commandLine of commandLines) expect(nodeFlags(commandLine)).toEqual(SERVICE_NODE_FLAGS);
  });

  it("npm start loads TypeScript without ts-node's repl and domain module, with the decorators' metadata NestJS injects by", () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const args = scripts.start.split(' ').slice(1);
    expect(args.at(-1)).toBe('src/main.ts');
    // The tests' child processes (the service, the CLI, verify-statement) load TypeScript as npm does.
    expect(args.slice(-1 - TYPESCRIPT_LOADER.length, -1)).toEqual(TYPESCRIPT_LOADER);
    for (const tool of ['cli', 'verify-statement']) expect(scripts[tool].split(' ').slice(1, -1)).toEqual(TYPESCRIPT_LOADER);
    // npm start's command line with a probe for the service's script (test/bench/runtime-probe.ts).
    const run = spawnSync(process.execPath, [...args.slice(0, -1), 'test/bench/runtime-probe.ts'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(0);
    expect(JSON.parse(/^RUNTIME (.*)$/m.exec(run.stdout)![1])).toEqual({ domain: false, paramtypes: ['Dependency'] });
  });
});
