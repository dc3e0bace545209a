import { formatAmount, MAX_AMOUNT, Minor, parseAmount, parseFormattedAmount, parseMinorUnits } from './money';

describe('parseAmount', () => {
  it.each<[string, Minor]>([
    ['0', 0n],
    ['0.0', 0n],
    ['0.00', 0n],
    ['0.5', 50n],
    ['0.05', 5n],
    ['12.5', 1250n],
    ['12.50', 1250n],
    ['1000000.00', 100000000n],
    ['10000000000000', MAX_AMOUNT],
    ['10000000000000.00', MAX_AMOUNT],
    ['9999999999999.99', MAX_AMOUNT - 1n],
  ])('accepts %p as %p', (text, minor) => {
    expect(parseAmount(text)).toBe(minor);
  });

  it.each([
    ['empty', ''],
    ['negative', '-1'],
    ['explicit plus', '+1'],
    ['exponent', '1e3'],
    ['three decimals', '1.234'],
    ['no integer part', '.5'],
    ['a trailing dot', '1.'],
    ['a leading zero', '01'],
    ['two zeros', '00'],
    ['a leading space', ' 1'],
    ['a trailing space', '1 '],
    ['a trailing newline', '1\n'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['a decimal comma', '1,00'],
    ['a thousands separator', '1,000.00'],
    ['hex', '0x10'],
    ['one cent above MAX_AMOUNT', '10000000000000.01'],
    ['a unit above MAX_AMOUNT', '10000000000001'],
    ['sixteen integer digits', '9999999999999999'],
    ['seventeen integer digits', '10000000000000000'],
    ['full-width digits', '１２'],
    ['full-width digits with decimals', '１２.５０'],
    ['a full-width digit among ASCII ones', '1２.50'],
    ['Arabic-Indic digits', '١٢'],
  ])('refuses %s (%p)', (_name, text) => {
    expect(parseAmount(text)).toBeUndefined();
  });
});

describe('formatAmount', () => {
  it.each<[Minor, string]>([
    [0n, '0.00'],
    [5n, '0.05'],
    [50n, '0.50'],
    [100n, '1.00'],
    [1250n, '12.50'],
    [100000000n, '1000000.00'],
    [MAX_AMOUNT, '10000000000000.00'],
    [-5n, '-0.05'],
    [-1250n, '-12.50'],
  ])('formats %p as %p', (minor, text) => {
    expect(formatAmount(minor)).toBe(text);
  });
});

describe('round trip', () => {
  it.each<Minor>([0n, 1n, 5n, 9n, 10n, 99n, 100n, 101n, 1250n, 123456789n, MAX_AMOUNT - 1n, MAX_AMOUNT])(
    'parseAmount(formatAmount(%p)) gives it back',
    (minor) => {
      expect(parseAmount(formatAmount(minor))).toBe(minor);
    },
  );

  it.each(['0.5', '12.5', '7', '1000000.00'])('formatAmount(parseAmount(%p)) is its two-decimal form, stable', (text) => {
    const formatted = formatAmount(parseAmount(text)!);
    expect(formatted).toMatch(/^(0|[1-9][0-9]*)\.[0-9]{2}$/);
    expect(formatAmount(parseAmount(formatted)!)).toBe(formatted);
  });

  it('round-trips a thousand pseudo-random amounts', () => {
    // A fixed linear congruential sequence keeps the run reproducible.
    let seed = 0x2026n;
    for (let i = 0; i < 1000; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      const minor = seed % (MAX_AMOUNT + 1n);
      expect(parseAmount(formatAmount(minor))).toBe(minor);
    }
  });
});

describe('parseFormattedAmount', () => {
  it.each<[string, Minor]>([
    ['0.00', 0n],
    ['0.05', 5n],
    ['12.50', 1250n],
    ['-0.05', -5n],
    ['-12.50', -1250n],
  ])('reads %p back as %p', (text, minor) => {
    expect(parseFormattedAmount(text)).toBe(minor);
    expect(formatAmount(minor)).toBe(text);
  });

  it.each(['', '12', '12.5', '12.500', '+1.00', '01.00', '1e3', ' 1.00', '1.00 '])('refuses %p', (text) => {
    expect(parseFormattedAmount(text)).toBeUndefined();
  });
});

describe('parseMinorUnits', () => {
  it.each<[unknown, Minor]>([
    ['0', 0n],
    ['1250', 1250n],
    ['-5', -5n],
    [1250, 1250n],
  ])('reads %p as %p', (value, minor) => {
    expect(parseMinorUnits(value)).toBe(minor);
  });

  it.each<[unknown]>([['12.50'], ['01'], [''], [1.5], [Number.MAX_SAFE_INTEGER + 1], [null], [undefined]])('refuses %p', (value) => {
    expect(parseMinorUnits(value)).toBeUndefined();
  });
});
