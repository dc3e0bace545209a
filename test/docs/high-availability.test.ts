import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { etcdArguments, haproxyConfig, patroniConfig, TEST_LAYOUT_PORTS } from '../ha/cluster-config';

const DOC = 'docs/high-availability.md';
/** Where the document puts the members' data; the harness uses a temporary directory instead. */
const DOC_LAYOUT = { root: '/var/lib/topup-ha', ...TEST_LAYOUT_PORTS };

/** Every fenced block of the document with its info string. */
function fencedBlocks(markdown: string): { info: string; code: string }[] {
  return [...markdown.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].map(([, info, code]) => ({ info, code }));
}

/**
 * The configuration files docs/high-availability.md shows are the ones the
 * HA suite (test/ha/) runs: rendered by the same functions, with the
 * document's directory in place of the suite's temporary one.
 */
describe(`${DOC}: the configuration shown is the configuration tested`, () => {
  const markdown = readFileSync(resolve(__dirname, '../..', DOC), 'utf8');
  const blocks = fencedBlocks(markdown);

  it("pg1's patroni.yml, in full", () => {
    const shown = blocks.filter((b) => b.info === 'yaml' && b.code.includes('\nname: pg1\n'));
    expect(shown.map((b) => b.code)).toEqual([patroniConfig(DOC_LAYOUT, TEST_LAYOUT_PORTS.members[0])]);
  });

  it.each(TEST_LAYOUT_PORTS.members.slice(1).map((m) => [m.name, m]))("%s's patroni.yml: pg1's with its own name and ports, as the members' table says", (name, member) => {
    const [pg1] = TEST_LAYOUT_PORTS.members;
    const theirs = patroniConfig(DOC_LAYOUT, pg1).split('\n');
    const differing = patroniConfig(DOC_LAYOUT, member)
      .split('\n')
      .filter((line, i) => line !== theirs[i]);
    expect(differing.filter((line) => ![member.name, String(member.pgPort), String(member.restPort)].some((own) => line.includes(own)))).toEqual([]);
    expect(markdown).toContain(`| ${name} | 127.0.0.1:${member.pgPort} | 127.0.0.1:${member.restPort} |`);
  });

  it('haproxy.cfg', () => {
    expect(blocks.filter((b) => b.info === 'haproxy').map((b) => b.code)).toEqual([haproxyConfig(DOC_LAYOUT)]);
  });

  it("etcd's command line", () => {
    const shown = blocks.find((b) => b.info === 'sh' && b.code.startsWith('etcd '));
    expect(shown?.code.replace(/\\\n\s*/g, '').split(/\s+/).filter(Boolean)).toEqual(['etcd', ...etcdArguments(DOC_LAYOUT)]);
  });
});
