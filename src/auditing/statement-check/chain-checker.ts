/**
 * The chain checker of a statement check: follows the hash chain and the
 * running amounts through the parsed lines, and names the first line that
 * was altered, removed or moved (the order of the checks: check-statement.ts).
 */
import { chainHash, GENESIS_HASH } from '../../shared/hash-chain';
import { formatAmount } from '../../shared/money';
import { CheckOptions, CheckReport, fileProblem, lineLabel, ProblemKind, StatementProblem } from './statement-report';
import { derivedProblem, ParsedLine, parseLine } from './statement-parser';
import { RawLine, Read } from './statement-reader';

/** The last line the chain was followed to, and the amounts after it. */
interface Tip {
  index: number;
  revision: number;
  hash: string;
  balance: bigint;
  frozen: bigint;
}

/** The report on a file's lines, in the order the file has them. */
export function checkLines(format: 'json' | 'csv', read: Read | { ok: false; error: string }, options: CheckOptions): CheckReport {
  if (!read.ok) return fileProblem(format, read.error);
  const raws = read.lines;
  const name = (index: number) => lineLabel(read, raws[index].line);
  const names = (a: number, b: number) => (read.linesAt === undefined ? `lines ${raws[a].line} and ${raws[b].line}` : `${name(a)} and ${name(b)}`);
  const total = raws.length;
  const maxProblems = options.maxProblems ?? 1000;
  const progressEvery = options.progressEvery ?? 10_000;
  const problems: StatementProblem[] = [];
  const notes: string[] = [];
  const report = (p: StatementProblem) => problems.push(p);

  const parsed = raws.map(parseLine);
  // Where each revision and hash occurs, to tell a moved line from a missing one.
  const byRevision = new Map<number, number>();
  const byHash = new Map<string, number>();
  parsed.forEach((p, index) => {
    if (typeof p === 'string') return;
    if (!byRevision.has(p.revision)) byRevision.set(p.revision, index);
    if (!byHash.has(p.hash)) byHash.set(p.hash, index);
  });

  const first = parsed.find((p): p is ParsedLine => typeof p !== 'string');
  const last = [...parsed].reverse().find((p): p is ParsedLine => typeof p !== 'string');
  let anchor: CheckReport['anchor'];
  let tip: Tip | undefined;
  /** True until the first readable line: the chain starts there. */
  let atStart = true;
  let stoppedAt: number | undefined;

  for (let index = 0; index < parsed.length; index++) {
    if (problems.length >= maxProblems) {
      notes.push(`stopped listing after ${maxProblems} problems at ${name(index - 1)}`);
      break;
    }
    if (options.onProgress && index > 0 && index % progressEvery === 0) options.onProgress(index, total);
    const p = parsed[index];
    const lineNo = raws[index].line;
    if (typeof p === 'string') {
      report({ line: lineNo, revision: revisionOf(raws[index]), kind: 'MALFORMED', message: p });
      if (tip && index + 1 < total) notes.push(`${name(index + 1)} is checked from its own prev_hash: the unreadable ${name(index)} breaks the chain`);
      tip = undefined;
      continue;
    }
    const at = (kind: ProblemKind, message: string) => report({ line: lineNo, revision: p.revision, kind, message });

    // 1. The line's own hash.
    const recomputed = chainHash(p.prevHash, p.revision, p.type, p.data);
    if (recomputed !== p.hash) {
      at('ALTERED', `its content does not match its hash (the revision, type, data or prev_hash was changed): recomputed ${recomputed}, stated ${p.hash}`);
      tip = tipAfter(index, p);
      atStart = false;
      continue;
    }

    // 2. Columns derived from the data, and the movement the data implies.
    const derived = derivedProblem(p);
    if ('kind' in derived) {
      at(derived.kind, derived.message);
      tip = tipAfter(index, p);
      atStart = false;
      continue;
    }
    const movement = derived;

    // 3. Continuity with the line before.
    let opening: { balance: bigint; frozen: bigint } | undefined;
    if (atStart) {
      atStart = false;
      // The chain starts here unless an earlier revision (or the line this one links to) comes later in the file.
      const partner = earlierLater(p, index, parsed, byHash);
      if (partner !== undefined) {
        const other = parsed[partner] as ParsedLine;
        at('REORDERED', `${names(index, partner)} are out of order: revision ${p.revision} comes before revision ${other.revision}`);
        const pairFits =
          partner === index + 1 &&
          other.revision === p.revision - 1 &&
          p.prevHash === other.hash &&
          chainHash(other.prevHash, other.revision, other.type, other.data) === other.hash &&
          (other.revision > 0 || other.prevHash === GENESIS_HASH);
        if (!pairFits) {
          stoppedAt = lineNo;
          break;
        }
        anchor = other.revision === 0 ? { kind: 'genesis' } : { kind: 'prev_hash', revision: other.revision, prevHash: other.prevHash };
        index++;
        tip = tipAfter(index - 1, p);
        continue;
      }
      if (p.revision === 0) {
        anchor = { kind: 'genesis' };
        if (p.prevHash !== GENESIS_HASH) {
          at('BROKEN_LINK', `the first event of a wallet (revision 0) must link to the genesis hash ${GENESIS_HASH}, this one links to ${p.prevHash}`);
          tip = tipAfter(index, p);
          continue;
        }
        opening = { balance: 0n, frozen: 0n };
      } else {
        anchor = { kind: 'prev_hash', revision: p.revision, prevHash: p.prevHash };
        notes.push(
          `the export starts mid-stream at revision ${p.revision}: it could only be checked from that anchor, ${name(index)}'s prev_hash ${p.prevHash} ` +
            `(the hash of revision ${p.revision - 1}, which this file alone cannot confirm), and ${name(index)}'s balance_after and frozen_after are taken as given`,
        );
      }
    } else if (tip) {
      const expected = tip.revision + 1;
      if (p.revision !== expected || p.prevHash !== tip.hash) {
        const continuity = continuityProblem(p, index, tip, parsed, byRevision, byHash, name, names);
        at(continuity.kind, continuity.message);
        if (continuity.kind === 'REORDERED') {
          const partner = continuity.partner;
          const swapped = partner === index + 1 ? parsed[partner] : undefined;
          const pairFits =
            swapped !== undefined &&
            typeof swapped !== 'string' &&
            swapped.revision === expected &&
            swapped.prevHash === tip.hash &&
            p.prevHash === swapped.hash &&
            chainHash(swapped.prevHash, swapped.revision, swapped.type, swapped.data) === swapped.hash;
          if (pairFits) {
            // A swapped pair: follow the chain in its true order and carry on after the pair.
            index++;
            tip = tipAfter(index - 1, p);
            continue;
          }
          stoppedAt = lineNo;
          break;
        }
        // MISSING or BROKEN_LINK: carry on from this line, its amounts taken as given.
        tip = tipAfter(index, p);
        continue;
      }
      opening = { balance: tip.balance, frozen: tip.frozen };
    }

    // 4. Running amounts.
    if (opening) {
      const balance = opening.balance + movement.balance;
      const frozen = opening.frozen + movement.frozen;
      const wrong = amountsProblem(p, balance, frozen, opening, movement);
      if (wrong) at('ALTERED', wrong);
      // With the data and the link verified, the computed amounts are the true ones.
      tip = { index, revision: p.revision, hash: p.hash, balance, frozen };
    } else {
      const { balance, frozen } = p.stated;
      if (p.availableAfter !== formatAmount(balance - frozen)) {
        at(
          'ALTERED',
          `available_after is ${p.availableAfter} but balance_after ${p.balanceAfter} minus frozen_after ${p.frozenAfter} is ${formatAmount(balance - frozen)}`,
        );
      }
      tip = tipAfter(index, p);
    }
  }
  if (options.onProgress && total >= progressEvery && stoppedAt === undefined) options.onProgress(total, total);
  if (stoppedAt !== undefined)
    notes.push(`checking stopped at ${lineLabel(read, stoppedAt)}: with lines out of order, later results would only repeat the problem`);

  if (read.header) headerProblems(read.header, parsed, report, notes);
  problems.sort((a, b) => a.line - b.line);
  return {
    ok: problems.length === 0,
    format,
    linesAt: read.linesAt,
    lines: total,
    firstRevision: first?.revision,
    lastRevision: last?.revision,
    lastHash: last?.hash,
    anchor,
    problems,
    notes,
  };
}

function revisionOf(raw: RawLine): number | undefined {
  const r = raw.fields?.revision;
  return typeof r === 'number' && Number.isSafeInteger(r) ? r : raw.revisionHint;
}

/** The tip after a line whose amounts are taken as stated (re-anchoring after a problem). */
function tipAfter(index: number, p: ParsedLine): Tip {
  return {
    index,
    revision: p.revision,
    hash: p.hash,
    ...p.stated,
  };
}

function amountsProblem(
  p: ParsedLine,
  balance: bigint,
  frozen: bigint,
  opening: { balance: bigint; frozen: bigint },
  movement: { balance: bigint; frozen: bigint },
): string | undefined {
  const signed = (v: bigint) => (v < 0n ? `- ${formatAmount(-v)}` : `+ ${formatAmount(v)}`);
  if (p.balanceAfter !== formatAmount(balance)) {
    return `balance_after is ${p.balanceAfter} but the balance before, ${formatAmount(opening.balance)}, ${signed(movement.balance)} for this ${p.type} is ${formatAmount(balance)}`;
  }
  if (p.frozenAfter !== formatAmount(frozen)) {
    return `frozen_after is ${p.frozenAfter} but the frozen amount before, ${formatAmount(opening.frozen)}, ${signed(movement.frozen)} for this ${p.type} is ${formatAmount(frozen)}`;
  }
  if (p.availableAfter !== formatAmount(balance - frozen)) {
    return `available_after is ${p.availableAfter} but balance_after ${formatAmount(balance)} minus frozen_after ${formatAmount(frozen)} is ${formatAmount(balance - frozen)}`;
  }
  return undefined;
}

/** A later line with a lower revision than the first line, or that the first line links to. */
function earlierLater(p: ParsedLine, index: number, parsed: (ParsedLine | string)[], byHash: Map<string, number>): number | undefined {
  const linked = byHash.get(p.prevHash);
  if (linked !== undefined && linked > index) return linked;
  let best: number | undefined;
  for (let j = index + 1; j < parsed.length; j++) {
    const q = parsed[j];
    if (typeof q === 'string' || q.revision >= p.revision) continue;
    if (q.revision === p.revision - 1) return j;
    if (best === undefined) best = j;
  }
  return best;
}

/** Why line `index` does not follow the tip: moved, missing lines before it, or a foreign link. */
function continuityProblem(
  p: ParsedLine,
  index: number,
  tip: Tip,
  parsed: (ParsedLine | string)[],
  byRevision: Map<number, number>,
  byHash: Map<string, number>,
  name: (index: number) => string,
  names: (a: number, b: number) => string,
): { kind: ProblemKind; message: string; partner?: number } {
  const expected = tip.revision + 1;
  const pair = (j: number) => `${names(index, j)} are out of order${j === index + 1 ? '' : ` (${name(j)} belongs here)`}`;

  if (p.revision > expected) {
    // Is a skipped revision (or the line this one links to) further down the file?
    let partner: number | undefined;
    for (let r = expected; r < p.revision && partner === undefined; r++) {
      const j = byRevision.get(r);
      if (j !== undefined && j > index) partner = j;
    }
    const linked = byHash.get(p.prevHash);
    if (partner === undefined && linked !== undefined && linked > index) partner = linked;
    if (partner !== undefined) {
      const other = parsed[partner] as ParsedLine;
      return {
        kind: 'REORDERED',
        partner,
        message: `${pair(partner)}: revision ${p.revision} comes before revision ${other.revision} (expected revision ${expected} after ${name(tip.index)})`,
      };
    }
    const n = p.revision - expected;
    return {
      kind: 'MISSING',
      message: `${n} line${n === 1 ? '' : 's'} missing between revision ${tip.revision} and ${p.revision}, before this line (revision${n === 1 ? ` ${expected}` : `s ${expected}..${p.revision - 1}`})`,
    };
  }
  if (p.revision < expected) {
    if (p.revision === tip.revision && p.hash === tip.hash) {
      return { kind: 'REORDERED', message: `it repeats ${name(tip.index)} (revision ${p.revision}): a duplicated line` };
    }
    const earlier = byRevision.get(p.revision);
    const where = earlier !== undefined && earlier < index ? `; revision ${p.revision} already appeared at ${name(earlier)}` : '';
    return {
      kind: 'REORDERED',
      message: `${names(tip.index, index)} are out of order: revision ${p.revision} comes after revision ${tip.revision}${where}`,
    };
  }
  // Right revision, wrong link.
  const linked = byHash.get(p.prevHash);
  if (linked !== undefined && linked > index) {
    return { kind: 'REORDERED', partner: linked, message: `${pair(linked)}: this line links to ${name(linked)}, which comes after it` };
  }
  return {
    kind: 'BROKEN_LINK',
    message: `its prev_hash ${p.prevHash} is not the hash of ${name(tip.index)} (revision ${tip.revision}) ${tip.hash}: ${name(tip.index)} was altered and re-hashed, or this line does not belong after it`,
  };
}

/** The JSON header (merchant, currency, paging) against the lines. */
function headerProblems(header: NonNullable<Read['header']>, parsed: (ParsedLine | string)[], report: (p: StatementProblem) => void, notes: string[]): void {
  const opened = parsed.find((p): p is ParsedLine => typeof p !== 'string' && p.type === 'WalletOpened');
  if (opened) {
    if (typeof header.merchantId === 'string' && opened.data.merchantId !== header.merchantId) {
      report({
        line: opened.line,
        revision: opened.revision,
        kind: 'ALTERED',
        message: `the statement is for merchant ${JSON.stringify(header.merchantId)} but its WalletOpened event opened ${JSON.stringify(opened.data.merchantId)}`,
      });
    }
    if (typeof header.currency === 'string' && opened.data.currency !== header.currency) {
      report({
        line: opened.line,
        revision: opened.revision,
        kind: 'ALTERED',
        message: `the statement's currency is ${JSON.stringify(header.currency)} but its WalletOpened event says ${JSON.stringify(opened.data.currency)}`,
      });
    }
  }
  if (typeof header.nextAfterRevision === 'number') {
    notes.push(`this is one page of a longer statement: the next page starts after revision ${header.nextAfterRevision}`);
  }
}
