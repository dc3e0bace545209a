import { numberOption, readSettings } from './settings';

describe('npm run bench: the end-to-end phase at a rate given by hand', () => {
  it('takes --e2e-rate or E2E_RATE, and otherwise leaves the rate to the steady fraction of the spread rate', () => {
    expect(readSettings([], {}).endToEndRate).toBeUndefined();
    expect(readSettings(['--e2e-rate', '250'], {}).endToEndRate).toBe(250);
    expect(readSettings(['--e2e-rate=320'], { E2E_RATE: '100' }).endToEndRate).toBe(320);
    expect(readSettings([], { E2E_RATE: '100' }).endToEndRate).toBe(100);
  });

  it('refuses a rate below one order a second, or not a number', () => {
    expect(() => readSettings(['--e2e-rate', '0'], {})).toThrow('--e2e-rate / E2E_RATE must be a number from 1');
    expect(() => readSettings([], { E2E_RATE: 'fast' })).toThrow('--e2e-rate / E2E_RATE must be a number from 1');
  });
});

describe('npm run bench: the end-to-end warm-up', () => {
  it("is 5 s unless --e2e-warmup or E2E_WARMUP_S says otherwise, apart from the submit scenarios' --warmup", () => {
    expect(readSettings([], {}).endToEndWarmupS).toBe(5);
    expect(readSettings(['--warmup', '1'], {}).endToEndWarmupS).toBe(5);
    expect(readSettings(['--e2e-warmup', '0'], {}).endToEndWarmupS).toBe(0);
    expect(readSettings([], { E2E_WARMUP_S: '2.5' }).endToEndWarmupS).toBe(2.5);
    expect(() => readSettings(['--e2e-warmup', '-1'], {})).toThrow('--e2e-warmup / E2E_WARMUP_S must be a number from 0');
  });
});

describe('npm run bench:writes and bench:soak: a number option', () => {
  it('comes from --name=value, else the variable, else the default, and must be positive', () => {
    expect(numberOption(['--rate=250'], { RATE: '100' }, 'rate', 'RATE', 400)).toBe(250);
    expect(numberOption([], { RATE: '100' }, 'rate', 'RATE', 400)).toBe(100);
    expect(numberOption([], {}, 'rate', 'RATE', 400)).toBe(400);
    expect(() => numberOption(['--rate=0'], {}, 'rate', 'RATE', 400)).toThrow('--rate / RATE must be a positive number, got 0');
    expect(() => numberOption([], { RATE: 'fast' }, 'rate', 'RATE', 400)).toThrow('--rate / RATE must be a positive number');
  });

  it('takes 0 where the option says 0 means off, and nothing below it', () => {
    expect(numberOption([], {}, 'heap', 'HEAP_MB', 0, { zero: true })).toBe(0);
    expect(numberOption(['--heap=512'], {}, 'heap', 'HEAP_MB', 0, { zero: true })).toBe(512);
    expect(() => numberOption(['--heap=-1'], {}, 'heap', 'HEAP_MB', 0, { zero: true })).toThrow('--heap / HEAP_MB must be a number, 0 or more, got -1');
  });
});
