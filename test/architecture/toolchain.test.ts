import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * What CI tests is what the Docker image runs: the same Node major, on a line
 * `engines` admits, and `engines` admits no line past its end of life.
 */

const ROOT = resolve(__dirname, '../..');
const read = (file: string) => readFileSync(resolve(ROOT, file), 'utf8');

/** [major, minor, patch] of a version such as 24.22.3. */
const parts = (version: string) => version.split('.').map(Number);
const atLeast = (version: string, floor: string) => {
  const [a, b] = [parts(version), parts(floor)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** Node.js lines still supported on 2026-12-06: 22 (maintenance until 2027-04-30) and 24 (until 2028-04-30). */
const OLDEST_SUPPORTED_MAJOR = 22;

describe('the toolchain', () => {
  const ciVersion = /^NODE_CI_VERSION=(\d+\.\d+\.\d+)$/m.exec(read('.ci/run'))?.[1];
  const imageMajors = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

  it('CI runs the Node major of every stage of the Docker image', () => {
    expect(ciVersion).toBeDefined();
    expect(imageMajors.length).toBeGreaterThan(0);
    for (const major of imageMajors) expect(major).toBe(parts(ciVersion!)[0]);
  });

  it('engines admits the Node CI runs and no line past its end of life', () => {
    const floor = /^>=(\d+\.\d+(?:\.\d+)?)$/.exec(engines)?.[1];
    expect(floor).toBeDefined();
    expect(parts(floor!)[0]).toBeGreaterThanOrEqual(OLDEST_SUPPORTED_MAJOR);
    expect(atLeast(ciVersion!, floor!)).toBe(true);
  });
});
