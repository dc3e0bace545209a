// The toolchains the merchant examples in examples/ need, and whether this
// machine has them. Plain JavaScript: global-setup.js reports them before the
// run, examples.test.ts skips (and says why) the ones that are missing.
const { spawnSync } = require('node:child_process');

const TOOLCHAINS = [
  { language: 'Python', command: 'python3', versionArgs: ['--version'], install: 'apt-get install -y python3' },
  { language: 'PHP', command: 'php', versionArgs: ['--version'], install: 'apt-get install -y php-cli' },
  { language: 'Java', command: 'java', versionArgs: ['-version'], install: 'apt-get install -y openjdk-17-jdk-headless' },
];

/** Each toolchain with `version` (its first line) or `missing` (why it cannot run). */
function detectToolchains() {
  return TOOLCHAINS.map((toolchain) => {
    const run = spawnSync(toolchain.command, toolchain.versionArgs, { encoding: 'utf8', timeout: 20_000 });
    if (run.error || run.status !== 0) {
      const why = run.error?.code === 'ENOENT' ? `${toolchain.command} is not installed` : `${toolchain.command} ${toolchain.versionArgs.join(' ')} failed`;
      return { ...toolchain, missing: `${why} (${toolchain.install})` };
    }
    return { ...toolchain, version: `${run.stdout}${run.stderr}`.trim().split('\n')[0].replace(/ \(.*$/, '') };
  });
}

module.exports = { detectToolchains };
