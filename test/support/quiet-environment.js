// Jest's node environment, with what the service writes to stdout and stderr
// (its log lines, and the output of services run as child processes) held
// back, and printed only for a test that fails, under the test's name.
// SHOW_SERVICE_LOGS=1 lets everything through as it comes.
require('./swc-in-main-thread');
const { TestEnvironment } = require('jest-environment-node');

/** Enough to see what led to a failure; a long suite's older lines are dropped. */
const KEEP_CHARACTERS = 1_000_000;

class QuietEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.quiet = !process.env.SHOW_SERVICE_LOGS;
    /** Output outside any test (beforeAll, afterAll), shown with the first failure. */
    this.suiteOutput = '';
    this.testOutput = '';
    this.inTest = false;
    this.suiteOutputShown = false;
  }

  async setup() {
    await super.setup();
    if (!this.quiet) return;
    this.original = { stdout: process.stdout.write, stderr: process.stderr.write };
    const hold = (chunk, encoding, callback) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8');
      if (this.inTest) this.testOutput = keepTail(this.testOutput + text);
      else this.suiteOutput = keepTail(this.suiteOutput + text);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) process.nextTick(done);
      return true;
    };
    process.stdout.write = hold;
    process.stderr.write = hold;
  }

  async teardown() {
    if (this.original) {
      process.stdout.write = this.original.stdout;
      process.stderr.write = this.original.stderr;
      this.original = undefined;
    }
    await super.teardown();
  }

  handleTestEvent(event) {
    if (!this.original) return;
    switch (event.name) {
      case 'test_start':
        this.inTest = true;
        this.testOutput = '';
        break;
      case 'test_done':
        this.inTest = false;
        if (event.test.errors.length > 0) this.show(`test "${fullName(event.test)}"`, this.testOutput);
        this.testOutput = '';
        break;
      case 'hook_failure':
        this.show(`${event.hook.type} hook`, this.inTest ? this.testOutput : '');
        break;
      default:
        break;
    }
  }

  show(what, output) {
    const parts = [];
    if (!this.suiteOutputShown && this.suiteOutput) {
      parts.push(`--- output outside the tests of ${this.testPath} so far ---\n${this.suiteOutput}`);
      this.suiteOutputShown = true;
    }
    if (output) parts.push(`--- output during the failing ${what} ---\n${output}`);
    if (parts.length > 0) this.original.stderr.call(process.stderr, `\n${parts.join('\n')}--- end of the held output ---\n`);
  }
}

function keepTail(text) {
  return text.length > KEEP_CHARACTERS ? `[... earlier output dropped ...]\n${text.slice(-KEEP_CHARACTERS)}` : text;
}

function fullName(test) {
  const names = [];
  for (let block = test; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent) names.unshift(block.name);
  return names.join(' › ');
}

module.exports = QuietEnvironment;
