import { createHmac, randomBytes } from 'node:crypto';
import { provisionMerchant, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/**
 * Thousands of correctly signed requests with random and malformed bodies.
 * Whatever arrives, the service answers below 500 with one of the contract's
 * two envelopes, says 2xx only to valid requests, and a refused request moves
 * no money. FUZZ_SEED=<n> replays a run; FUZZ_REQUESTS=<n> changes its size.
 */

const SUBMIT = '/api/v2/topup/submit';
const QUERY = '/api/v2/topup/query';
const BALANCE = '/api/v2/balance';
const PRODUCTS = '/api/v2/products';
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed2026) >>> 0;
const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 4000);
const BATCH = 40;
const DEPOSIT = 100_000_000n; // 1,000,000.00
const PRICES: Record<string, bigint> = { 'mlbb-86': 120n, 'plain-10': 1000n };
const FAILURE_KEYS = new Set(['success', 'code', 'message', 'field']);
const STACK_TRACE = /\n\s+at |node_modules|\/src\/|\.[jt]s:\d+|TypeError|RangeError|SyntaxError|ReferenceError/;

// ---------------------------------------------------------------- randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = mulberry32(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)];
const chance = (p: number) => rand() < p;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const OTN_CHARS = ALNUM + '-_.:';
const word = (n: number, chars = ALNUM) => Array.from({ length: n }, () => chars[int(chars.length)]).join('');
let serial = 0;
/** A fresh, valid out_trade_no. */
const freshOtn = () => `F${(serial++).toString(36)}-${word(1 + int(12), OTN_CHARS)}`;

// ------------------------------------------------------------- body material

/** Raw JSON text fragments: each is a value that is wrong for a string field. */
const WRONG_SCALARS = [
  '0',
  '-1',
  '1.5',
  '-1.20',
  '1e308',
  '-1e308',
  '1e400',
  '-0',
  '123456789012345678901234567890',
  '0.000001',
  'true',
  'false',
  '[]',
  '["a"]',
  '{}',
  '{"a":"b"}',
  '[[[]]]',
  '[null]',
  '{"__proto__":{}}',
];
/** Strings that are never a valid out_trade_no or sku_id (spaces, Unicode, control, too long...). */
const BAD_IDENTIFIERS = [
  '""',
  '" "',
  '"A 1"',
  '" A1"',
  '"A1 "',
  '"A\\tB"',
  '"A\\nB"',
  '"A\\u0000B"',
  '"\\u0000"',
  '"A/B"',
  '"A#1"',
  '"A+1"',
  '"A=1"',
  '"Ａ１"',
  '"１２３"',
  '"ترتيب"',
  '"\\u202eA1"',
  '"A\\u200fB"',
  '"🎮"',
  '"e\\u0301"',
  '"\\ud800"',
  '"\\udfff"',
  '"A\\ud83dB"',
  `"${'x'.repeat(65)}"`,
  `"${'x'.repeat(1000)}"`,
  '"A\\\\B"',
  '"A\\"B"',
  '"café"',
  '"A%20B"',
];
/** Strings that are never a valid account_id: empty, control, lone surrogates, too long. */
const BAD_ACCOUNT_IDS = [
  '""',
  '"\\u0000"',
  '"123\\u0000"',
  '"12\\n34"',
  '"12\\r34"',
  '"\\t1234"',
  '"\\u001b[31m1234"',
  '"\\u007f"',
  '"\\u0085abc"',
  '"\\ud800"',
  '"abc\\udc00"',
  '"\\udbff\\udbff"',
  `"${'1'.repeat(65)}"`,
  `"${'é'.repeat(65)}"`,
  `"${'🎮'.repeat(65)}"`,
  `"${'9'.repeat(5000)}"`,
  '"\\ue000private"',
  '"\\uffff"',
];
/** Account ids a person could type, ending in 999 so fulfilment never settles them (CONTRACT §4). */
const GOOD_ACCOUNT_IDS = [
  () => `${1000 + int(9e6)}999`,
  () => `user.${word(5)}@999`,
  () => `ｱｶｳﾝﾄ１２３999`,
  () => `١٢٣٤999`,
  () => `🎮💎${word(3)}999`,
  () => `e\u0301a\u030a${word(2)}999`,
  () => `玩家${word(2)}999`,
  () => `${'1'.repeat(61)}999`,
  () => `𝓐𝓑 ${word(2)} 999`,
];
/** Printable but debatable: format characters, edge spaces, 64 astral characters. Either answer is fine. */
const ODD_ACCOUNT_IDS = [
  () => `\u200f123999`,
  () => `123\u200d999`,
  () => `\ufeff123999`,
  () => ` ${word(4)}999 `,
  () => `${'🎮'.repeat(61)}999`,
  () => `\u202e${word(4)}999`,
  () => `12\u2028${word(2)}999`,
  () => `12\u00a0${word(2)}999`,
];

function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '"x"' + '}'.repeat(depth);
}
function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}
const DEEP_VALUES = [() => deepObject(1000), () => deepArray(1000), () => deepObject(1 + int(200)), () => '['.repeat(999) + '"x"' + ']'.repeat(999)];

// ---------------------------------------------------------------- generation

type Expectation =
  /** A valid submit: 202 for a new out_trade_no, 200 DUPLICATE for a replay, 409 for another target. */
  | { kind: 'submit'; outTradeNo: string; target: string; amount: bigint }
  /** A valid query of an accepted order. */
  | { kind: 'found'; outTradeNo: string }
  /** A valid request to balance or products. */
  | { kind: 'ok' }
  /** Must be refused. */
  | { kind: 'reject' }
  /** Valid or not is debatable: 202 or a refusal, never a 5xx. */
  | { kind: 'either' };

interface FuzzCase {
  label: string;
  path: string;
  body: string | Buffer;
  contentType?: string;
  expect: Expectation;
}

interface Accepted {
  outTradeNo: string;
  target: string;
  amount: bigint;
  data: any;
}

/** Valid submit material: a JSON text built field by field, and the target it names. */
function validSubmitParts(outTradeNo: string) {
  const sku = pick(['mlbb-86', 'plain-10']);
  const accountId = pick(GOOD_ACCOUNT_IDS)();
  const accountFields: Record<string, string> = sku === 'mlbb-86' ? { server_id: pick(['2001', '1', 'S-9', '東京', 'x'.repeat(128)]) } : {};
  const fields: [string, string][] = [
    ['out_trade_no', JSON.stringify(outTradeNo)],
    ['sku_id', JSON.stringify(sku)],
    ['account_id', JSON.stringify(accountId)],
    ['account_fields', JSON.stringify(accountFields)],
  ];
  return { sku, accountId, accountFields, fields, target: targetKey(sku, accountId, accountFields) };
}

function targetKey(sku: string, accountId: string, accountFields: Record<string, string>) {
  return JSON.stringify([sku, accountId, Object.entries(accountFields).sort()]);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

const objectText = (fields: [string, string][], ws = '') => `{${ws}${fields.map(([k, v]) => `"${k}"${ws}:${ws}${v}`).join(`,${ws}`)}${ws}}`;

function submitCase(accepted: Accepted[], refusedOtns: string[]): FuzzCase {
  const roll = rand();
  // Valid submits: new, replays of accepted orders (same or other target), and refused ids reused.
  if (roll < 0.22) {
    const reuse = accepted.length > 0 && chance(0.35) ? pick(accepted) : undefined;
    if (reuse && chance(0.5)) {
      const [sku, accountId, entries] = JSON.parse(reuse.target) as [string, string, [string, string][]];
      const fields = shuffle<[string, string]>([
        ['out_trade_no', JSON.stringify(reuse.outTradeNo)],
        ['sku_id', JSON.stringify(sku)],
        ['account_id', JSON.stringify(accountId)],
        ['account_fields', JSON.stringify(Object.fromEntries(shuffle(entries)))],
      ]);
      return {
        label: 'replay, same target',
        path: SUBMIT,
        body: objectText(fields, pick(['', ' ', '\n'])),
        expect: { kind: 'submit', outTradeNo: reuse.outTradeNo, target: reuse.target, amount: reuse.amount },
      };
    }
    const outTradeNo = reuse?.outTradeNo ?? (refusedOtns.length > 0 && chance(0.2) ? refusedOtns.splice(int(refusedOtns.length), 1)[0] : freshOtn());
    const parts = validSubmitParts(outTradeNo);
    return {
      label: reuse ? 'replay, random target' : 'valid submit',
      path: SUBMIT,
      body: objectText(shuffle(parts.fields), pick(['', '', ' ', '\n  ', '\t'])),
      contentType: pick([
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        undefined,
      ]),
      expect: { kind: 'submit', outTradeNo, target: parts.target, amount: PRICES[parts.sku] },
    };
  }
  if (roll < 0.25) {
    const parts = validSubmitParts(freshOtn());
    parts.fields[2] = ['account_id', JSON.stringify(pick(ODD_ACCOUNT_IDS)())];
    return { label: 'odd but printable account_id', path: SUBMIT, body: objectText(parts.fields), expect: { kind: 'either' } };
  }
  if (roll < 0.27) {
    // One random character of a valid body changed: anything may come of it.
    const text = objectText(validSubmitParts(freshOtn()).fields);
    const at = int(text.length);
    const mutated = pick([
      () => text.slice(0, at) + text.slice(at + 1),
      () => text.slice(0, at) + pick(['"', '{', '}', ',', ':', '\\', ' ', '0', 'x', '\u0000', '\ud800', '🎮', '[']) + text.slice(at),
      () => text.slice(0, at) + pick(['"', '{', '}', ',', ':', '\\', 'a', '9']) + text.slice(at + 1),
    ])();
    return { label: 'one-character mutation', path: SUBMIT, body: mutated, expect: { kind: 'either' } };
  }
  const refused = (label: string, body: string | Buffer): FuzzCase => ({ label, path: SUBMIT, body, expect: { kind: 'reject' } });
  const parts = validSubmitParts(freshOtn());
  const fields = parts.fields;
  const set = (name: string, value: string) => {
    const index = fields.findIndex(([k]) => k === name);
    fields[index] = [name, value];
  };
  const drop = (name: string) =>
    fields.splice(
      fields.findIndex(([k]) => k === name),
      1,
    );
  switch (int(17)) {
    case 0: {
      const name = pick(['out_trade_no', 'sku_id', 'account_id']);
      set(name, pick(WRONG_SCALARS));
      return refused(`wrong type for ${name}`, objectText(fields));
    }
    case 1: {
      set('account_fields', pick([...WRONG_SCALARS.filter((v) => !v.startsWith('{')), '"server_id=1"', '""', 'null', '[["server_id","1"]]']));
      if (parts.sku === 'plain-10' && chance(0.5)) set('sku_id', '"mlbb-86"');
      return refused('wrong type for account_fields', objectText(fields));
    }
    case 2: {
      const name = pick(['out_trade_no', 'sku_id', 'account_id', 'account_fields']);
      if (chance(0.5)) drop(name);
      else set(name, 'null');
      return refused(`missing ${name}`, objectText(fields));
    }
    case 3: {
      // Amounts and prices are never the merchant's to send.
      const extra = pick([
        'amount',
        'price',
        'currency',
        'merchant_id',
        'order_no',
        'status',
        'amount_minor',
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'hasOwnProperty',
        '',
        ' ',
        'Out_Trade_No',
        'sku_id ',
      ]);
      const value = pick(['-1.20', '0', '-0', '1e308', '123456789012345678901234567890', '"0.01"', '"-5.00"', '0.001', '{}', 'null', 'true', '{"amount":-1}']);
      fields.splice(int(fields.length + 1), 0, [extra, value]);
      return refused(`extra field ${JSON.stringify(extra)}`, objectText(fields));
    }
    case 4: {
      set('out_trade_no', pick(BAD_IDENTIFIERS));
      return refused('bad out_trade_no', objectText(fields));
    }
    case 5: {
      set('sku_id', pick([...BAD_IDENTIFIERS, '"MLBB-86"', '"mlbb-86 "', '"no-such-sku"', '"mlbb_86"', `"${'s'.repeat(64)}"`]));
      return refused('bad or unknown sku_id', objectText(fields));
    }
    case 6: {
      set('account_id', pick(BAD_ACCOUNT_IDS));
      return refused('bad account_id', objectText(fields));
    }
    case 7: {
      const mlbb = chance(0.6);
      set('sku_id', mlbb ? '"mlbb-86"' : '"plain-10"');
      const server = mlbb ? ['"server_id":"2001"'] : [];
      const weird = pick([
        ['"server_id":2001'],
        ['"server_id":["2001"]'],
        ['"server_id":{"id":"2001"}'],
        ['"server_id":""'],
        ['"server_id":null'],
        ['"server_id":"\\u0000"'],
        ['"server_id":"\\ud800"'],
        ['"server_id":true'],
        ['"server_id":1e308'],
        [...server, '"__proto__":"x"'],
        [...server, '"__proto__":{"server_id":"1"}'],
        ['"__proto__":{"server_id":"2001"}'],
        [...server, '"constructor":"x"'],
        [...server, '"constructor":{"prototype":{"polluted":"yes"}}'],
        [...server, '"toString":"x"'],
        [...server, '"zone":"1"'],
        [...server, '"":"1"'],
        ['"SERVER_ID":"2001"'],
        ['"server_id ":"2001"'],
        [...server, `"${'k'.repeat(200)}":"1"`],
        [...server, '"nested":{"a":{"b":{"c":"d"}}}'],
        [...server, ...Array.from({ length: 40 }, (_, i) => `"f${i}":"v"`)],
      ]);
      set('account_fields', `{${weird.join(',')}}`);
      return refused('bad account_fields', objectText(fields));
    }
    case 8: {
      const name = pick(['out_trade_no', 'sku_id', 'account_id', 'account_fields', 'extra']);
      const value = pick(DEEP_VALUES)();
      if (name === 'extra') fields.push(['deep', value]);
      else set(name, value);
      return refused(`deeply nested ${name}`, objectText(fields));
    }
    case 9: {
      // The same key twice, whichever value is valid; or twice inside account_fields.
      if (parts.sku === 'mlbb-86' && chance(0.25)) {
        set('account_fields', pick(['{"server_id":"1","server_id":"2"}', '{"server_id":"1","server_id":"1"}', '{"server_id":"1","server\u005fid":"2"}']));
        return refused('duplicate key in account_fields', objectText(fields));
      }
      const name = pick(['out_trade_no', 'sku_id', 'account_id', 'account_fields']);
      const original = fields.find(([k]) => k === name)!;
      const other: [string, string] = [name, name === 'account_fields' ? '{}' : JSON.stringify(name === 'out_trade_no' ? freshOtn() : 'b')];
      fields.splice(int(fields.length + 1), 0, chance(0.5) ? other : ([...original] as [string, string]));
      return refused(`duplicate key ${name}`, objectText(fields));
    }
    case 10: {
      const nested = chance(0.5);
      const body = pick([
        '[]',
        '[{}]',
        `[${objectText(fields)}]`,
        '0',
        '-1.20',
        '1e308',
        '123456789012345678901234567890',
        '"text"',
        `"${objectText(fields).replace(/"/g, '\\"')}"`,
        'null',
        'true',
        'false',
        '""',
        '[null]',
      ]);
      return refused('not an object', nested ? `  ${body}\n` : body);
    }
    case 11: {
      const text = objectText(fields);
      const body = pick([
        text.slice(0, int(text.length)),
        text + ',',
        text + text,
        text.replace(/"/g, "'"),
        text.replace('}', ',}'),
        text.replace(':', '='),
        `${text} // comment`,
        `/* c */${text}`,
        text.replace(/"account_id"/, 'account_id'),
        '{"out_trade_no":NaN}',
        '{"out_trade_no":Infinity}',
        '{"a":0x10}',
        '{"a":01}',
        '{"a":.5}',
        '{"a":"\\x41"}',
        '{"a":"\\u12"}',
        '{"a":"line\nbreak"}',
        '{"a":"tab\there"}',
        '{"a":"\u0000"}',
        '{,}',
        '{"a"}',
        'undefined',
        '{"a":1}}',
        '{{}}',
        deepArray(20000),
        deepObject(5000),
      ]);
      return refused('invalid JSON', body);
    }
    case 12: {
      const text = Buffer.from(objectText(fields), 'utf8');
      const bad = pick([[0xff], [0xfe], [0xc0, 0x80], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc3], [0xf0, 0x9f, 0x8e]]);
      // Inside a string value, or anywhere.
      const at = chance(0.6) ? text.indexOf(Buffer.from('"', 'utf8'), text.indexOf(Buffer.from('account_id')) + 12) + 1 : int(text.length + 1);
      return refused('invalid UTF-8', Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]));
    }
    case 13:
      return refused('empty body', pick(['', ' ', '\n', '\r\n\t ']));
    case 14: {
      const size = pick([70_000, 65_537, 200_000]);
      set('account_id', JSON.stringify('1'.repeat(size)));
      return refused('body over 64 KiB', objectText(fields));
    }
    case 15: {
      set(
        'out_trade_no',
        JSON.stringify(
          pick([word(65, OTN_CHARS), word(64, OTN_CHARS) + ' ', ` ${word(10)}`, `${word(5)} ${word(5)}`, `${word(5)}é`, '１２３', `${word(3)}\u200b`]),
        ),
      );
      return refused('out_trade_no: spaces, Unicode or 65 characters', objectText(fields));
    }
    default: {
      set(
        'account_id',
        pick([JSON.stringify('1'.repeat(65)), JSON.stringify(`${word(5)}\u0007`), JSON.stringify(`\u0001\u0002\u0003`), JSON.stringify('\u009f1')]),
      );
      return refused('account_id: 65 characters or control characters', objectText(fields));
    }
  }
}

function queryCase(accepted: Accepted[]): FuzzCase {
  const refused = (label: string, body: string | Buffer): FuzzCase => ({ label, path: QUERY, body, expect: { kind: 'reject' } });
  const known = accepted.length > 0 ? pick(accepted) : undefined;
  switch (int(12)) {
    case 0:
    case 1: {
      if (!known) return refused('unknown out_trade_no', JSON.stringify({ out_trade_no: freshOtn() }));
      const body = pick([
        { out_trade_no: known.outTradeNo },
        { order_no: known.data.order_no },
        { order_no: known.data.order_no, out_trade_no: known.outTradeNo },
        { out_trade_no: known.outTradeNo, order_no: known.data.order_no },
      ]);
      return { label: 'query of an accepted order', path: QUERY, body: JSON.stringify(body), expect: { kind: 'found', outTradeNo: known.outTradeNo } };
    }
    case 2:
      return refused('unknown order', JSON.stringify(pick([{ out_trade_no: freshOtn() }, { order_no: 'T' + word(26, '0123456789ABCDEFGHJKMNPQRSTVWXYZ') }])));
    case 3: {
      if (!known || accepted.length < 2) return refused('empty object', '{}');
      const other = accepted.find((a) => a.outTradeNo !== known.outTradeNo)!;
      return refused('identifiers of two orders', JSON.stringify({ order_no: known.data.order_no, out_trade_no: other.outTradeNo }));
    }
    case 4:
      return refused('wrong type', `{"${pick(['order_no', 'out_trade_no'])}":${pick(WRONG_SCALARS)}}`);
    case 5:
      return refused(
        'bad identifier',
        `{"${pick(['order_no', 'out_trade_no'])}":${pick([...BAD_IDENTIFIERS, '"t0000000000000000000000000"', '"T000000000000000000000000O"'])}}`,
      );
    case 6: {
      const id = known ? `"order_no":${JSON.stringify(known.data.order_no)},` : '';
      return refused(
        'extra field',
        `{${id}"${pick(['merchant_id', 'status', '__proto__', 'constructor', 'amount', '', 'order_No'])}":${pick(['1', '"x"', 'null', '{}', '-1.20'])}}`,
      );
    }
    case 7:
      return refused('not an object', pick(['[]', 'null', '0', '"T00"', 'true', `[{"out_trade_no":"${known?.outTradeNo ?? 'x'}"}]`]));
    case 8:
      return refused(
        'invalid JSON or UTF-8',
        pick<string | Buffer>(['', '{', '{"order_no":}', deepArray(1000), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), Buffer.from([0xef, 0xbb])]),
      );
    case 9: {
      const id = known ? JSON.stringify(known.outTradeNo) : '"x"';
      return refused('duplicate key', `{"out_trade_no":${id},"out_trade_no":${id}}`);
    }
    case 10:
      return refused('deep value', `{"order_no":${pick(DEEP_VALUES)()}}`);
    default:
      return refused('lone surrogate or NUL', `{"out_trade_no":"${pick(['\\ud800', '\\u0000', 'A\\udc00', '\\u202eA'])}"}`);
  }
}

function catalogueCase(): FuzzCase {
  const path = pick([BALANCE, PRODUCTS]);
  if (chance(0.3)) return { label: `${path} {}`, path, body: pick(['{}', ' {} ', '{\n}']), expect: { kind: 'ok' } };
  const body = pick<string | Buffer>([
    '{"x":1}',
    '{"currency":"EUR"}',
    '{"merchant_id":"m"}',
    '{"__proto__":{}}',
    '{"constructor":1}',
    '[]',
    'null',
    '',
    '{',
    '{}{}',
    deepObject(1000),
    `{"a":"${'x'.repeat(10_000)}"}`,
    '{"":""}',
    Buffer.from([0x7b, 0xc0, 0x80, 0x7d]),
    '{"a":1,"a":1}',
    '"{}"',
    '{"\\ud800":1}',
  ]);
  return { label: `${path} malformed`, path, body, expect: { kind: 'reject' } };
}

// ------------------------------------------------------------------- signing

function sign(secret: string, timestamp: string, nonce: string, path: string, body: Buffer) {
  return createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}\n${nonce}\n${path}\n`, 'utf8'), body]))
    .digest('hex');
}

// --------------------------------------------------------------------- suite

describe(`fuzzing the merchant API (seed ${SEED}, FUZZ_SEED=${SEED} to replay)`, () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service, { deposit: DEPOSIT });
  });
  afterAll(async () => teardown());

  async function send(c: FuzzCase) {
    const bytes = typeof c.body === 'string' ? Buffer.from(c.body, 'utf8') : c.body;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(12).toString('hex');
    const headers: Record<string, string> = {
      'X-Api-Key': merchant.apiKey,
      'X-Timestamp': timestamp,
      'X-Nonce': nonce,
      'X-Signature': sign(merchant.appSecret, timestamp, nonce, c.path, bytes),
    };
    if (c.contentType) headers['Content-Type'] = c.contentType;
    const response = await fetch(`${service.url}${c.path}`, { method: 'POST', headers, body: bytes });
    return { status: response.status, text: await response.text() };
  }

  it(`answers ${TOTAL} random and malformed requests within the contract and moves money only for accepted orders`, async () => {
    console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays this run), ${TOTAL} requests`);
    const started = Date.now();
    const statuses: Record<number, number> = {};
    const codes: Record<string, number> = {};
    const byLabel: Record<string, Record<string, number>> = {};
    const violations: string[] = [];
    const accepted: Accepted[] = [];
    const acceptedByOtn = new Map<string, Accepted>();
    const refusedOtns: string[] = [];
    let sent = 0;

    const violation = (index: number, c: FuzzCase, problem: string, status: number, text: string) => {
      const body = typeof c.body === 'string' ? c.body : `<bytes ${c.body.toString('hex')}>`;
      violations.push(`#${index} [${c.label}] ${c.path} ${problem}: HTTP ${status} ${text.slice(0, 300)} <- ${JSON.stringify(body.slice(0, 200))}`);
    };

    for (let batchStart = 0; batchStart < TOTAL; batchStart += BATCH) {
      // Cases of one batch are drawn before any is sent; replays only name orders of earlier batches.
      const cases: FuzzCase[] = [];
      const inBatch = new Set<string>();
      for (let i = batchStart; i < Math.min(TOTAL, batchStart + BATCH); i++) {
        const r = rand();
        let c = r < 0.6 ? submitCase(accepted, refusedOtns) : r < 0.9 ? queryCase(accepted) : catalogueCase();
        // Two submits of one out_trade_no in flight at once would race: keep one per batch.
        while (c.expect.kind === 'submit' && inBatch.has(c.expect.outTradeNo)) c = submitCase([], refusedOtns);
        if (c.expect.kind === 'submit') inBatch.add(c.expect.outTradeNo);
        cases.push(c);
      }
      const replies = await Promise.all(cases.map((c) => send(c)));
      sent += cases.length;

      replies.forEach(({ status, text }, k) => {
        const c = cases[k];
        const index = batchStart + k;
        statuses[status] = (statuses[status] ?? 0) + 1;
        const seen = (byLabel[c.label] ??= {});
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          violation(index, c, 'body is not JSON', status, text);
          return;
        }
        codes[json?.code] = (codes[json?.code] ?? 0) + 1;
        seen[`${status} ${json?.code}`] = (seen[`${status} ${json?.code}`] ?? 0) + 1;
        if (status >= 500) violation(index, c, 'server error', status, text);
        if (STACK_TRACE.test(text)) violation(index, c, 'stack trace text in the body', status, text);
        const success = status >= 200 && status < 300;
        if (success) {
          const keys = Object.keys(json ?? {})
            .sort()
            .join(',');
          if (
            json?.success !== true ||
            keys !== 'code,data,success' ||
            !['OK', 'ACCEPTED', 'DUPLICATE'].includes(json.code) ||
            typeof json.data !== 'object' ||
            json.data === null
          ) {
            violation(index, c, 'not a success envelope', status, text);
          }
        } else if (
          typeof json !== 'object' ||
          json === null ||
          Array.isArray(json) ||
          json.success !== false ||
          typeof json.code !== 'string' ||
          !/^[A-Z][A-Z_]*$/.test(json.code) ||
          typeof json.message !== 'string' ||
          ('field' in json && typeof json.field !== 'string') ||
          Object.keys(json).some((key) => !FAILURE_KEYS.has(key))
        ) {
          violation(index, c, 'not a failure envelope', status, text);
        }

        const e = c.expect;
        switch (e.kind) {
          case 'reject':
            if (success) violation(index, c, 'a malformed request got a 2xx', status, text);
            else if (![400, 404, 409, 413, 422].includes(status)) violation(index, c, 'unexpected refusal status', status, text);
            if (c.path === SUBMIT && !success && typeof c.body === 'string') {
              // A refused submit leaves its out_trade_no free: reuse it later, when it is a valid one.
              const otn = /"out_trade_no":"([A-Za-z0-9\-_.:]{1,64})"/.exec(c.body)?.[1];
              if (otn && !acceptedByOtn.has(otn) && chance(0.3)) refusedOtns.push(otn);
            }
            break;
          case 'either':
            if (status === 202) {
              const order: Accepted = { outTradeNo: json.data.out_trade_no, target: '', amount: PRICES[json.data.sku_id], data: json.data };
              order.target = targetKey(json.data.sku_id, json.data.account_id, json.data.account_fields);
              accepted.push(order);
              acceptedByOtn.set(order.outTradeNo, order);
            } else if (success) violation(index, c, 'a debatable request got a 2xx other than 202', status, text);
            else if (![400, 409, 413, 422].includes(status)) violation(index, c, 'unexpected refusal status', status, text);
            break;
          case 'ok':
            if (status !== 200 || json.code !== 'OK') violation(index, c, 'a valid request was not 200 OK', status, text);
            break;
          case 'found': {
            const order = acceptedByOtn.get(e.outTradeNo)!;
            if (status !== 200 || JSON.stringify(json.data) !== JSON.stringify(order.data))
              violation(index, c, 'an accepted order was not found as placed', status, text);
            break;
          }
          case 'submit': {
            const before = acceptedByOtn.get(e.outTradeNo);
            if (!before) {
              if (status !== 202 || json.code !== 'ACCEPTED') {
                violation(index, c, 'a valid new submit was not 202 ACCEPTED', status, text);
                break;
              }
              if (json.data.amount !== (Number(e.amount) / 100).toFixed(2) || json.data.status !== 'processing' || json.data.out_trade_no !== e.outTradeNo) {
                violation(index, c, 'the accepted order is not the one submitted', status, text);
              }
              const order: Accepted = { outTradeNo: e.outTradeNo, target: e.target, amount: e.amount, data: json.data };
              accepted.push(order);
              acceptedByOtn.set(e.outTradeNo, order);
            } else if (before.target === e.target) {
              if (status !== 200 || json.code !== 'DUPLICATE' || JSON.stringify(json.data) !== JSON.stringify(before.data)) {
                violation(index, c, 'a replay was not 200 DUPLICATE with the existing order', status, text);
              }
            } else if (status !== 409 || json.code !== 'OUT_TRADE_NO_CONFLICT') {
              violation(index, c, 'a conflicting replay was not 409 OUT_TRADE_NO_CONFLICT', status, text);
            }
            break;
          }
        }
      });
    }

    // Money: nothing deducted (no order settled), the accepted amounts frozen, refusals moved nothing.
    await service.catchUp();
    const frozen = accepted.reduce((sum, o) => sum + o.amount, 0n);
    const wallet = await send({ label: 'final balance', path: BALANCE, body: '{}', expect: { kind: 'ok' } });
    const format = (minor: bigint) => `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;
    expect(JSON.parse(wallet.text)).toEqual({
      success: true,
      code: 'OK',
      data: { currency: 'USD', balance: format(DEPOSIT), frozen_balance: format(frozen), available_balance: format(DEPOSIT - frozen) },
    });

    // Every accepted order is there, as it was placed.
    const lost: string[] = [];
    for (let i = 0; i < accepted.length; i += BATCH) {
      const batch = accepted.slice(i, i + BATCH);
      const found = await Promise.all(
        batch.map((o) =>
          send({
            label: 'final query',
            path: QUERY,
            body: JSON.stringify({ out_trade_no: o.outTradeNo }),
            expect: { kind: 'found', outTradeNo: o.outTradeNo },
          }),
        ),
      );
      found.forEach((reply, k) => {
        const data = reply.status === 200 ? JSON.parse(reply.text).data : undefined;
        if (JSON.stringify(data) !== JSON.stringify(batch[k].data)) lost.push(`${batch[k].outTradeNo}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
      });
    }
    sent += 1 + accepted.length;

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      [
        `fuzz seed ${SEED}: ${sent} requests in ${seconds} s, ${accepted.length} orders accepted, ${format(frozen)} frozen`,
        `status codes: ${JSON.stringify(Object.fromEntries(Object.entries(statuses).sort()))}`,
        `error codes: ${JSON.stringify(Object.fromEntries(Object.entries(codes).sort()))}`,
        ...(process.env.FUZZ_VERBOSE
          ? Object.entries(byLabel)
              .sort()
              .map(([label, seen]) => `  ${label}: ${JSON.stringify(seen)}`)
          : []),
        ...(violations.length ? [`${violations.length} violations, first ones:`, ...violations.slice(0, 40)] : []),
      ].join('\n'),
    );
    expect(sent).toBeGreaterThanOrEqual(3000);
    expect(accepted.length).toBeGreaterThan(100);
    expect(statuses[200] ?? 0).toBeGreaterThan(0);
    expect(statuses[409] ?? 0).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(violations).toEqual([]);
    // The service runs in this process: no __proto__ or constructor key polluted the prototypes.
    expect(Object.getOwnPropertyNames(Object.prototype).filter((k) => ['polluted', 'server_id', 'sku_id', 'a', 'x'].includes(k))).toEqual([]);
  });
});
