import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The dependency rule: the domain (deciders and src/shared) depends on nothing
 * but itself, and production code never reaches into the test suites.
 */

const ROOT = resolve(__dirname, '..');

/** Every module specifier a TypeScript source imports, re-exports or requires. */
export function importSpecifiers(source: string): string[] {
  // Drop comments that start a line (JSDoc, // notes), so prose mentioning a path is not an import.
  const code = source.replace(/^[ \t]*\/\*[\s\S]*?\*\//gm, '').replace(/^[ \t]*\/\/.*$/gm, '');
  const patterns = [
    // import x from 'a'; import { x } from 'a'; import type { X } from 'a'; export * from 'a'; export { x } from 'a'
    /^[ \t]*(?:import|export)\s+(?:type\s+)?[\w$*{}\s,]*?\bfrom\s*['"]([^'"\n]+)['"]/gm,
    // import 'a';
    /^[ \t]*import\s*['"]([^'"\n]+)['"]/gm,
    // require('a'), import('a'), import x = require('a')
    /\b(?:require|import)\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g,
  ];
  const found: string[] = [];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1]);
  return found;
}

export interface Violation {
  file: string;
  specifier: string;
  reason: string;
}

/** A rule says why a specifier, imported by a file (path relative to the repository), is forbidden, or nothing. */
export type Rule = (specifier: string, file: string) => string | undefined;

export function violations(files: ReadonlyArray<{ file: string; source: string }>, rule: Rule): Violation[] {
  return files.flatMap(({ file, source }) =>
    importSpecifiers(source).flatMap((specifier) => {
      const reason = rule(specifier, file);
      return reason === undefined ? [] : [{ file, specifier, reason }];
    }),
  );
}

export function describeViolations(found: readonly Violation[]): string {
  return found.map((v) => `${v.file} imports '${v.specifier}' (${v.reason})`).join('\n');
}

/** The repository path (with forward slashes) a specifier points at, or undefined for a package. */
function targetOf(specifier: string, file: string): string | undefined {
  if (specifier.startsWith('.'))
    return relative(ROOT, resolve(ROOT, dirname(file), specifier))
      .split(sep)
      .join('/');
  if (/^(?:src|test|projections)(?:\/|$)/.test(specifier)) return specifier; // a baseUrl-style path
  return undefined;
}

const within = (path: string | undefined, folder: string) => path !== undefined && (path === folder || path.startsWith(`${folder}/`));

const FORBIDDEN_PACKAGES: ReadonlyArray<[RegExp, string]> = [
  [/^@nestjs\//, 'the framework'],
  [/^@eventstore\//, 'an event store client'],
  [/^pg(?:\/|$)/, 'the Postgres driver'],
];

export const domainRule: Rule = (specifier, file) => {
  for (const [pattern, what] of FORBIDDEN_PACKAGES) if (pattern.test(specifier)) return `the domain must not depend on ${what}`;
  if (within(targetOf(specifier, file), 'src/infrastructure')) return 'the domain must not depend on src/infrastructure';
  return undefined;
};

export const noTestImportsRule: Rule = (specifier, file) =>
  within(targetOf(specifier, file), 'test') ? 'production code must not depend on test/' : undefined;

/** TypeScript files under a folder of the repository, as repository paths with forward slashes. */
function typeScriptFiles(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(relative(ROOT, path).split(sep).join('/'));
    }
  };
  walk(join(ROOT, folder));
  return out.sort();
}

const read = (file: string) => ({ file, source: readFileSync(join(ROOT, file), 'utf8') });

describe('architecture', () => {
  const domainFiles = [
    ...typeScriptFiles('src/ledger').filter((f) => f.endsWith('.decider.ts')),
    ...typeScriptFiles('src/shared').filter((f) => !f.endsWith('.spec.ts') && !f.endsWith('/decider-specification.ts')),
  ];
  const productionFiles = [...typeScriptFiles('src'), ...typeScriptFiles('projections')];

  it('finds the files it checks', () => {
    expect(domainFiles).toEqual(expect.arrayContaining(['src/ledger/order/order.decider.ts', 'src/ledger/wallet/wallet.decider.ts', 'src/shared/decider.ts']));
    expect(domainFiles).not.toContain('src/shared/decider-specification.ts');
    expect(domainFiles.some((f) => f.endsWith('.spec.ts'))).toBe(false);
    expect(productionFiles).toEqual(expect.arrayContaining(['src/main.ts', 'projections/projection-runner.ts']));
  });

  it('the domain imports nothing from @nestjs/*, @eventstore/*, pg or src/infrastructure', () => {
    expect(describeViolations(violations(domainFiles.map(read), domainRule))).toBe('');
  });

  it('nothing under src/ or projections/ imports from test/', () => {
    expect(describeViolations(violations(productionFiles.map(read), noTestImportsRule))).toBe('');
  });

  describe('the checker', () => {
    it('finds every form of import', () => {
      const source = [
        `import { Injectable } from '@nestjs/common';`,
        `import type { Pool } from "pg";`,
        `import {`,
        `  EventStore,`,
        `  START,`,
        `} from '../../infrastructure/event-store/event-store.port';`,
        `import * as esdb from '@eventstore/db-client';`,
        `import Default, { named as alias } from 'pg/lib/client';`,
        `import 'reflect-metadata';`,
        `export * from './money';`,
        `export { x } from './x';`,
        `const fs = require('node:fs');`,
        `const later = await import('./later');`,
        `import legacy = require('legacy');`,
      ].join('\n');
      expect(importSpecifiers(source)).toEqual(
        expect.arrayContaining([
          '@nestjs/common',
          'pg',
          '../../infrastructure/event-store/event-store.port',
          '@eventstore/db-client',
          'pg/lib/client',
          'reflect-metadata',
          './money',
          './x',
          'node:fs',
          './later',
          'legacy',
        ]),
      );
      expect(importSpecifiers(source)).toHaveLength(11);
    });

    it('ignores comments and strings that merely mention a path', () => {
      const source = [
        `/**`,
        ` * Both pass the contract suite in test/event-store; see import { x } from 'pg'.`,
        ` */`,
        `// import { Pool } from 'pg';`,
        `const note = 'from here';`,
        `export const a = 1;`,
      ].join('\n');
      expect(importSpecifiers(source)).toEqual([]);
    });

    it('flags a domain file that imports the framework, a driver or infrastructure', () => {
      const found = violations(
        [
          {
            file: 'src/ledger/order/order.decider.ts',
            source: [
              `import { Injectable } from '@nestjs/common';`,
              `import { Pool } from 'pg';`,
              `import { jsonEvent } from '@eventstore/db-client';`,
              `import { EventStore } from '../../infrastructure/event-store/event-store.port';`,
              `import { Minor } from '../../shared/money';`,
              `import { pgp } from 'pgp-not-pg';`,
            ].join('\n'),
          },
        ],
        domainRule,
      );
      expect(found.map((v) => v.specifier)).toEqual(['@nestjs/common', 'pg', '@eventstore/db-client', '../../infrastructure/event-store/event-store.port']);
      const message = describeViolations(found);
      expect(message).toContain(`src/ledger/order/order.decider.ts imports '@nestjs/common'`);
      expect(message).toContain(`src/ledger/order/order.decider.ts imports '../../infrastructure/event-store/event-store.port'`);
    });

    it('flags production code that imports from test/, and only that', () => {
      const found = violations(
        [
          { file: 'projections/rebuild.ts', source: `import { fixtures } from '../test/support/fixtures';` },
          { file: 'src/ledger/streams.ts', source: `import { db } from '../../test/support/test-database';\nimport { x } from './test-helpers';` },
          { file: 'src/main.ts', source: `import { AppModule } from './app.module';` },
        ],
        noTestImportsRule,
      );
      expect(found.map((v) => `${v.file} -> ${v.specifier}`)).toEqual([
        'projections/rebuild.ts -> ../test/support/fixtures',
        'src/ledger/streams.ts -> ../../test/support/test-database',
      ]);
    });

    it('makes the architecture test fail on a violation', () => {
      const found = violations([{ file: 'src/shared/money.ts', source: `import { Pool } from 'pg';` }], domainRule);
      expect(() => expect(describeViolations(found)).toBe('')).toThrow(/src\/shared\/money\.ts imports 'pg'/);
    });
  });
});
