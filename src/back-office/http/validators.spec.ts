import { callbackUrlProblem, ipOrCidrProblem, storedCallbackUrl } from './validators';

describe('ipOrCidrProblem', () => {
  it.each(['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '255.255.255.255/32', '::1', '2001:db8::/32', '::/0', 'fe80::/128', '::ffff:10.0.0.1'])(
    'accepts %s',
    (entry) => expect(ipOrCidrProblem(entry)).toBeUndefined(),
  );

  it.each([
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/-1',
    '10.0.0.0/08',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '/8',
    '300.1.1.1',
    '010.0.0.1',
    'fe80::1%eth0',
    'localhost',
    ' 10.0.0.1',
    '',
    5,
    null,
  ])('refuses %p', (entry) => expect(ipOrCidrProblem(entry)).toEqual(expect.any(String)));
});

describe('callbackUrlProblem and storedCallbackUrl', () => {
  it.each([
    ['https://example.com/cb', 'https://example.com/cb'],
    ['https://EXAMPLE.com', 'https://example.com/'],
    ['https://example.com', 'https://example.com/'],
    ['HTTP://Shop.Example:8080?x=1', 'http://shop.example:8080/?x=1'],
    ['https://shop.example#top', 'https://shop.example/#top'],
    ['https://shop.example/A%20B?q=%22x%22', 'https://shop.example/A%20B?q=%22x%22'],
  ])('takes %s, stored as %s', (given, stored) => {
    expect(callbackUrlProblem(given)).toBeUndefined();
    expect(storedCallbackUrl(given)).toBe(stored);
  });

  it.each([
    ['https://example.com/cb"><script>alert(2)</script>', 'https://example.com/cb%22%3E%3Cscript%3Ealert(2)%3C/script%3E'],
    ['https://example.com/a b', 'https://example.com/a%20b'],
    ['https://example.com/a/../cb', 'https://example.com/cb'],
    ['https://example.com:443/cb', 'https://example.com/cb'],
    ['https://example.com\\cb', 'https://example.com/cb'],
    ['https://example.com/cb ', 'https://example.com/cb'],
    ['https://exa\tmple.com/cb', 'https://example.com/cb'],
    ['https://bücher.example/cb', 'https://xn--bcher-kva.example/cb'],
  ])('refuses %s, naming its normalised form', (given, normalised) => {
    expect(callbackUrlProblem(given)).toContain(`which is ${normalised};`);
  });
});
