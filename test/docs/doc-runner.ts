import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { DocBlock } from './doc-blocks';

/** What became of one block. */
export interface BlockOutcome {
  block: DocBlock;
  result: 'ran' | 'saved' | 'skipped';
}

/** A block that failed: the message names doc:line and carries the block and its output. */
export class DocTestFailure extends Error {
  constructor(block: Pick<DocBlock, 'doc' | 'line'>, what: string, details: string) {
    super(`${block.doc}:${block.line}: ${what}\n${details}`);
    this.name = 'DocTestFailure';
  }
}

interface Exit {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** Where the examples say TypeScript runs: the app of docs/merchant-client.md. */
export const EXAMPLE_APP = 'your-app';

/**
 * Runs the examples of the documents, in order, the way a reader pastes them:
 *
 * - The current directory starts as a scratch copy of the repository (its
 *   src, projections, scripts, examples, node_modules and package.json, linked), so commands
 *   "from the repository" work and the files they write stay out of it. The
 *   documents share it, in the order they are run: a later one may use what
 *   an earlier one set up (your-app/).
 * - Shell blocks run with bash under `set -euo pipefail`. Within a document
 *   each block starts with the variables earlier blocks exported and in the
 *   directory they left; each document starts afresh from the given
 *   environment. Background processes a block starts are stopped at the end
 *   of its document.
 * - A TypeScript block is saved in your-app/src and run there with ts-node,
 *   or, with `file PATH`, only saved. Every saved file is type-checked with
 *   the tsconfig.json of its app at the end (`typeCheck`), so runs need not.
 */
export class DocRunner {
  readonly workspace: string;
  private readonly scratch: string;
  private readonly saved: { file: string; block: DocBlock }[] = [];
  private processGroups: number[] = [];
  private counter = 0;

  constructor(
    private readonly root: string,
    private readonly blockTimeoutMs = 60_000,
  ) {
    this.workspace = mkdtempSync(join(tmpdir(), 'doc-test-'));
    this.scratch = mkdtempSync(join(tmpdir(), 'doc-test-scripts-'));
    for (const entry of ['src', 'projections', 'scripts', 'examples', 'node_modules', 'package.json']) symlinkSync(join(root, entry), join(this.workspace, entry));
  }

  async runDocument(blocks: DocBlock[], env: Record<string, string>): Promise<BlockOutcome[]> {
    const state = { env, cwd: this.workspace };
    const outcomes: BlockOutcome[] = [];
    try {
      for (const block of blocks) {
        if (block.directive?.kind === 'skip') {
          outcomes.push({ block, result: 'skipped' });
        } else if (block.directive?.kind === 'file') {
          this.save(block, resolve(state.cwd, block.directive.path));
          outcomes.push({ block, result: 'saved' });
        } else {
          if (block.language === 'shell') await this.shell(block, state);
          else await this.typescript(block, state.env);
          outcomes.push({ block, result: 'ran' });
        }
      }
    } finally {
      this.stopBackground();
    }
    return outcomes;
  }

  /** Type-checks every TypeScript file the documents saved, per app (the folder of the nearest tsconfig.json). */
  async typeCheck(): Promise<number> {
    const apps = new Map<string, { file: string; block: DocBlock }[]>();
    for (const saved of this.saved) {
      const app = this.appOf(saved.file);
      if (!app) throw new DocTestFailure(saved.block, `no tsconfig.json for ${relative(this.workspace, saved.file)}`, 'The document must say how to set up the app it runs in.');
      apps.set(app, [...(apps.get(app) ?? []), saved]);
    }
    for (const [app, files] of apps) {
      const config = join(app, 'tsconfig.doc-test.json');
      writeFileSync(config, JSON.stringify({ extends: './tsconfig.json', include: [], files: files.map((f) => relative(app, f.file)) }));
      const exit = await this.run(process.execPath, [join(this.root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', config], app, process.env as Record<string, string>);
      rmSync(config);
      if (exit.code !== 0) {
        const where = files.map((f) => `  ${relative(this.workspace, f.file)} is ${f.block.doc}:${f.block.line}`).join('\n');
        throw new DocTestFailure(files[0].block, `TypeScript in ${relative(this.workspace, app)}/ does not type-check`, `${exit.output}\n${where}`);
      }
    }
    return this.saved.length;
  }

  cleanUp(): void {
    this.stopBackground();
    rmSync(this.workspace, { recursive: true, force: true });
    rmSync(this.scratch, { recursive: true, force: true });
  }

  private async shell(block: DocBlock, state: { env: Record<string, string>; cwd: string }): Promise<void> {
    const id = ++this.counter;
    const [script, envFile, pwdFile] = ['sh', 'env', 'pwd'].map((ext) => join(this.scratch, `block-${id}.${ext}`));
    writeFileSync(script, `set -euo pipefail\n${block.code}\nenv -0 > '${envFile}'\npwd > '${pwdFile}'\n`);
    const exit = await this.run('bash', [script], state.cwd, state.env);
    this.show(block, exit);
    if (exit.code !== 0 || !existsSync(pwdFile)) throw this.failure(block, exit);
    state.env = Object.fromEntries(
      readFileSync(envFile, 'utf8')
        .split('\0')
        .filter((entry) => entry.includes('='))
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)])
        .filter(([name]) => !['_', 'SHLVL', 'PWD', 'OLDPWD'].includes(name)),
    );
    state.cwd = readFileSync(pwdFile, 'utf8').trim();
  }

  private async typescript(block: DocBlock, env: Record<string, string>): Promise<void> {
    const app = join(this.workspace, EXAMPLE_APP);
    if (!existsSync(join(app, 'tsconfig.json'))) {
      throw new DocTestFailure(block, `TypeScript examples run in ${EXAMPLE_APP}/, which has no tsconfig.json`, 'docs/merchant-client.md sets it up; it runs before the documents that use it.');
    }
    const file = join(app, 'src', `${basename(block.doc, '.md')}-${block.line}.ts`);
    this.save(block, file);
    const exit = await this.run(process.execPath, [join(this.root, 'node_modules/ts-node/dist/bin.js'), '--transpile-only', file], app, env);
    this.show(block, exit);
    if (exit.code !== 0) throw this.failure(block, exit);
  }

  private save(block: DocBlock, file: string): void {
    if (relative(this.workspace, file).startsWith('..')) throw new DocTestFailure(block, `${file} is outside the workspace`, block.code);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, block.code);
    this.saved.push({ file, block });
  }

  private appOf(file: string): string | undefined {
    for (let dir = dirname(file); dir.startsWith(this.workspace) && dir !== this.workspace; dir = dirname(dir)) {
      if (existsSync(join(dir, 'tsconfig.json'))) return dir;
    }
    return undefined;
  }

  /** DOC_TEST_VERBOSE=1 shows every block's output, not only a failing one's. */
  private show(block: DocBlock, exit: Exit): void {
    if (process.env.DOC_TEST_VERBOSE) process.stderr.write(`--- ${block.doc}:${block.line} (exit ${exit.code})\n${exit.output}`);
  }

  private failure(block: DocBlock, exit: Exit): DocTestFailure {
    const what = exit.timedOut ? `timed out after ${this.blockTimeoutMs / 1000} s` : `exited with ${exit.code}`;
    return new DocTestFailure(block, `the ${block.language} block ${what}`, `--- block ---\n${block.code}--- output ---\n${exit.output}`);
  }

  /**
   * Runs a command in a process group of its own, so that whatever it leaves
   * running in the background can be stopped with it. Waits for the command
   * itself, not for its background children, which may hold its output open.
   */
  private run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<Exit> {
    return new Promise((done) => {
      const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      this.processGroups.push(child.pid!);
      let output = '';
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        kill(child.pid!, 'SIGKILL');
      }, this.blockTimeoutMs);
      child.on('exit', (code) => {
        clearTimeout(timer);
        // Let the last output arrive, without waiting for background children.
        setTimeout(() => done({ code, output, timedOut }), 50);
      });
    });
  }

  private stopBackground(): void {
    for (const group of this.processGroups) kill(group, 'SIGTERM');
    this.processGroups = [];
  }
}

function kill(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // already gone
  }
}
