import { SqlValue } from '../../projections/projection';
import { inlineStatements, unnestRows } from '../../projections/statement-batch';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * A batch's rows reach Postgres as one array literal per column, written
 * into the statement's text: every value must come back as it went in,
 * whatever it holds (quotes, backslashes, the array syntax's own braces,
 * commas and the word NULL), and a null must stay a null.
 */
describe('statement batches: rows as arrays, written in as literals', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('create table t (name text, amount bigint, attempt int, at timestamptz, flag boolean, doc jsonb)');
  });
  afterAll(() => db.drop());

  const TYPES = ['text', 'bigint', 'int', 'timestamptz', 'boolean', 'jsonb'];
  const texts = ["it's", 'C:\\games\\', '"quoted"', '{braces}', 'a,b', 'NULL', '', ' spaced ', 'ünïcødé ✓', '\\"{,}\''];

  it('inserts every row as it was, the texts byte for byte and the nulls as nulls', async () => {
    const rows: SqlValue[][] = texts.map((name, i) => [
      name,
      BigInt(Number.MAX_SAFE_INTEGER) * 10n + BigInt(i),
      i,
      `2026-12-06T10:00:0${i}.000Z`,
      i % 2 === 0,
      JSON.stringify({ name, list: [i, null] }),
    ]);
    rows.push([null, null, null, null, null, null]);
    const source = unnestRows(rows, TYPES);
    expect(source.source).toBe('unnest($1::text[], $2::bigint[], $3::int[], $4::timestamptz[], $5::boolean[], $6::jsonb[])');
    await db.pool.query(inlineStatements([{ text: `insert into t select * from ${source.source}`, values: source.values }]));

    const { rows: stored } = await db.pool.query('select name, amount::text, attempt, to_json(at) #>> $1 as at, flag, doc from t order by attempt nulls last', [
      '{}',
    ]);
    expect(stored).toEqual([
      ...texts.map((name, i) => ({
        name,
        amount: (BigInt(Number.MAX_SAFE_INTEGER) * 10n + BigInt(i)).toString(),
        attempt: i,
        at: `2026-12-06T10:00:0${i}+00:00`,
        flag: i % 2 === 0,
        doc: { name, list: [i, null] },
      })),
      { name: null, amount: null, attempt: null, at: null, flag: null, doc: null },
    ]);
  });

  it('matches keys against an array, and numbers the placeholders from where it is told', async () => {
    await db.pool.query('truncate t');
    await db.pool.query(
      inlineStatements([{ text: 'insert into t (name, attempt) select * from unnest($1::text[], $2::int[])', values: [texts, texts.map((_, i) => i)] }]),
    );
    const source = unnestRows(
      texts.slice(0, 3).map((name) => [name, 7]),
      ['text', 'int'],
      2,
    );
    expect(source.source).toBe('unnest($2::text[], $3::int[])');
    await db.pool.query(
      inlineStatements([
        { text: `update t set flag = $1 from ${source.source} as w (name, attempt) where t.name = w.name`, values: [true, ...source.values] },
        { text: 'delete from t where name = any($1::text[])', values: [texts.slice(8)] },
      ]),
    );
    const { rows } = await db.pool.query('select name, flag from t order by attempt');
    expect(rows).toEqual(texts.slice(0, 8).map((name, i) => ({ name, flag: i < 3 ? true : null })));
  });

  it('refuses a number that Postgres could not read back', () => {
    expect(() => inlineStatements([{ text: 'select $1::int[]', values: [[1, Number.NaN]] }])).toThrow('not a finite number: NaN');
    expect(() => inlineStatements([{ text: 'select $1::int[]', values: [] }])).toThrow('statement uses $1 but has 0 values');
  });
});
