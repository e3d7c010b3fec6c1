import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addResources,
  fitsIn,
  formatResourceAmount,
  parseQuantity,
  type Resources,
  resourceAmount,
  subtractResources,
} from '../src/resource-quantity.ts';

const Ki = 1024;
const Mi = Ki * 1024;
const Gi = Mi * 1024;

describe('parseQuantity', () => {
  // Reference: resource.ParseQuantity in k8s.io/apimachinery v0.35.4 (values checked with Go).
  const valid: [string, number][] = [
    ['0', 0],
    ['00', 0],
    ['-0', 0],
    ['2', 2],
    ['+1', 1],
    ['-1', -1],
    ['1.', 1],
    ['.5', 0.5],
    ['1.5', 1.5],
    ['0.1', 0.1],
    ['500m', 0.5],
    ['1m', 0.001],
    ['1.5m', 0.0015],
    ['1.1m', 0.0011],
    ['1u', 0.000001],
    ['1n', 1e-9],
    ['1k', 1000],
    ['100M', 1e8],
    ['1G', 1e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['12E', 12e18],
    ['1Ki', 1024],
    ['1.5Ki', 1536],
    ['100Mi', 100 * Mi],
    ['1Gi', 1073741824],
    ['1.0Gi', Gi],
    ['0.5Gi', 512 * Mi],
    ['1Ti', 2 ** 40],
    ['1Pi', 2 ** 50],
    ['1Ei', 2 ** 60],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['1E+3', 1000],
    ['1e-3', 0.001],
    ['1E-3', 0.001],
    ['1e03', 1000],
    // Go rounds up to a whole nano unit.
    ['0.0000000001', 1e-9],
    ['1e-10', 1e-9],
    ['1e-400', 1e-9],
    ['0.0000000001Ki', 1.03e-7],
    // Go caps binary-suffixed quantities at the largest int64 (2^63 - 1, which is 2^63 as a double).
    ['9Ei', 2 ** 63],
    ['16Ei', 2 ** 63],
    ['16.0Ei', 2 ** 63],
    [`1${'0'.repeat(500)}Ki`, 2 ** 63],
  ];
  it.each(valid)('%j is %d', (text, value) => {
    expect(parseQuantity(text)).toBe(value);
  });

  const invalid: string[] = [
    '',
    '1.2.3',
    ' 1',
    '1 ',
    '1Mi ',
    '1,5',
    '0x10',
    '1K',
    '1mi',
    '1ki',
    '1e',
    '1e+',
    '1ee3',
    '1e3e3',
    '1e3Ki',
    '1Ki3',
    '1m3',
    '١',
    'one',
    // Beyond Go's int32 exponent (Go silently wraps it around) or a finite number.
    '1e4294967296',
    '1e99999999999999999999',
    '1e400',
    '2e519',
  ];
  it.each(invalid)('%j is not a quantity', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  // Deliberate difference: Go reads all of these as 0.
  it.each(['-', '+', '.', 'Gi', 'm', 'e3', '-Ki'])(
    '%j has no digits, so it is not a quantity (Go: 0)',
    (text) => {
      expect(parseQuantity(text)).toBeUndefined();
    },
  );

  it('round-trips every safe integer, with and without a binary suffix', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (n) => {
        expect(parseQuantity(String(n))).toBe(n === 0 ? 0 : n);
        expect(parseQuantity(`${n}Ki`)).toBe(n * 1024);
      }),
    );
  });

  it('is the nearest double to the decimal, not a product of rounded ones', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 9 }), (digits, scale) => {
        const text = `${digits}e-${scale}`;
        expect(parseQuantity(text)).toBe(Number(text));
      }),
    );
  });
});

describe('resourceAmount', () => {
  // Go: cpu -> Quantity.MilliValue(), anything else -> Quantity.Value(), both rounding up.
  const cases: [string, string, number | undefined][] = [
    ['cpu', '500m', 500],
    ['cpu', '2', 2000],
    ['cpu', '0.3', 300],
    ['cpu', '0.1', 100],
    ['cpu', '1.5m', 2],
    ['cpu', '1.1m', 2],
    ['cpu', '1u', 1],
    ['cpu', '1n', 1],
    ['cpu', '0', 0],
    ['cpu', '1e-3', 1],
    ['cpu', '1k', 1_000_000],
    ['memory', '1Gi', Gi],
    ['memory', '1.5Ki', 1536],
    ['memory', '128974848', 128974848],
    ['memory', '129e6', 129_000_000],
    ['memory', '129M', 129_000_000],
    ['memory', '123Mi', 123 * Mi],
    ['memory', '0.5', 1],
    ['memory', '500m', 1],
    ['memory', '1.5', 2],
    ['memory', '1e-10', 1],
    ['ephemeral-storage', '10Gi', 10 * Gi],
    ['nvidia.com/gpu', '1', 1],
    ['nvidia.com/gpu', '250m', 1],
    ['pods', '110', 110],
    // Not amounts: unparsable, negative (the API server refuses negative requests), too large.
    ['cpu', 'lots', undefined],
    ['memory', '1Gb', undefined],
    ['cpu', '-1', undefined],
    ['memory', '-1Gi', undefined],
    ['memory', '1e400', undefined],
    ['memory', '-', undefined],
  ];
  it.each(cases)('%s %j is %s', (resource, quantity, amount) => {
    expect(resourceAmount(resource, quantity)).toBe(amount);
  });

  it('counts negative zero as zero', () => {
    expect(resourceAmount('cpu', '-0')).toBe(0);
  });

  it('is exact where floating point would not be', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 6 }), (millis) => {
        expect(resourceAmount('cpu', `${millis}m`)).toBe(millis);
        expect(resourceAmount('cpu', (millis / 1000).toFixed(3))).toBe(millis);
      }),
    );
  });
});

describe('formatResourceAmount', () => {
  const cases: [string, number, string][] = [
    ['cpu', 500, '500m'],
    ['cpu', 4000, '4'],
    ['cpu', 1500, '1500m'],
    ['cpu', 1, '1m'],
    ['cpu', 0, '0'],
    ['cpu', -0, '0'],
    ['cpu', -500, '-500m'],
    ['memory', 4 * Gi, '4Gi'],
    ['memory', 1536 * Mi, '1536Mi'],
    ['memory', 1.5 * Gi, '1536Mi'],
    ['memory', 1536, '1536'],
    ['memory', 2048, '2Ki'],
    ['memory', 1000, '1000'],
    ['memory', 129_000_000, '129000000'],
    ['memory', 2 ** 60, '1Ei'],
    ['memory', 2 ** 63, '8Ei'],
    ['memory', 0, '0'],
    ['memory', -2 * Gi, '-2Gi'],
    ['ephemeral-storage', 10 * Gi, '10Gi'],
    ['hugepages-2Mi', 4 * Mi, '4Mi'],
    ['nvidia.com/gpu', 2, '2'],
    ['pods', 1024, '1024'],
  ];
  it.each(cases)('%s %d reads %j', (resource, amount, text) => {
    expect(formatResourceAmount(resource, amount)).toBe(text);
  });

  it('re-parses to the same amount, for cpu, byte resources and the rest', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('cpu', 'memory', 'ephemeral-storage', 'hugepages-1Gi', 'nvidia.com/gpu'),
        fc.oneof(
          fc.nat({ max: Number.MAX_SAFE_INTEGER }),
          fc.tuple(fc.nat({ max: 2 ** 20 }), fc.constantFrom(1000, Ki, Mi, Gi)).map(([n, unit]) => n * unit),
        ),
        (resource, amount) => {
          expect(resourceAmount(resource, formatResourceAmount(resource, amount))).toBe(amount);
        },
      ),
    );
  });
});

describe('addResources and subtractResources', () => {
  it('combine every resource of either side, a missing one counting as 0', () => {
    const a = { cpu: 1000, memory: Gi };
    const b = { cpu: 500, 'nvidia.com/gpu': 1 };
    expect(addResources(a, b)).toEqual({ cpu: 1500, memory: Gi, 'nvidia.com/gpu': 1 });
    expect(subtractResources(a, b)).toEqual({ cpu: 500, memory: Gi, 'nvidia.com/gpu': -1 });
    expect(addResources({}, {})).toEqual({});
  });

  it('do not change their inputs', () => {
    const a = { cpu: 1 };
    const b = { cpu: 2 };
    addResources(a, b);
    subtractResources(a, b);
    expect([a, b]).toEqual([{ cpu: 1 }, { cpu: 2 }]);
  });

  it('keep a resource called __proto__ as an ordinary entry', () => {
    const odd = JSON.parse('{"__proto__": 3}') as Resources;
    const sum = addResources(odd, odd);
    expect(Object.getPrototypeOf(sum)).toBe(Object.prototype);
    expect(Object.entries(sum)).toEqual([['__proto__', 6]]);
  });

  const resources = fc.dictionary(
    fc.constantFrom('cpu', 'memory', 'ephemeral-storage', 'nvidia.com/gpu', 'pods'),
    fc.integer({ min: 0, max: 2 ** 40 }),
  );
  const amount = (r: Resources, name: string) => r[name] ?? 0;

  it('are inverses: (a + b) - b = a', () => {
    fc.assert(
      fc.property(resources, resources, (a, b) => {
        const back = subtractResources(addResources(a, b), b);
        for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
          expect(amount(back, name)).toBe(amount(a, name));
        }
      }),
    );
  });

  it('hold each resource of either side once, in the order first seen, names like __proto__ included', () => {
    const odd = fc
      .array(
        fc.tuple(
          fc.constantFrom('cpu', 'memory', '__proto__', 'constructor', 'hasOwnProperty'),
          fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
        ),
      )
      // fromEntries defines own properties, as JSON.parse does for a worker's status.
      .map((entries) => Object.fromEntries(entries) as Resources);
    fc.assert(
      fc.property(odd, odd, (a, b) => {
        const names = [...new Set([...Object.keys(a), ...Object.keys(b)])];
        const own = (r: Resources, name: string) => (Object.hasOwn(r, name) ? r[name]! : 0);
        expect(Object.entries(addResources(a, b))).toEqual(names.map((n) => [n, own(a, n) + own(b, n)]));
        expect(Object.entries(subtractResources(a, b))).toEqual(names.map((n) => [n, own(a, n) - own(b, n)]));
      }),
    );
  });

  it('add commutes and subtracting from itself leaves nothing', () => {
    fc.assert(
      fc.property(resources, resources, (a, b) => {
        expect(addResources(a, b)).toEqual(addResources(b, a));
        expect(Object.values(subtractResources(a, a)).every((v) => v === 0)).toBe(true);
      }),
    );
  });
});

describe('fitsIn', () => {
  const cases: [Resources, Resources, string[]][] = [
    [{}, {}, []],
    [{ cpu: 500 }, { cpu: 500 }, []],
    [{ cpu: 501 }, { cpu: 500 }, ['cpu']],
    [{ cpu: 500, memory: Gi }, { cpu: 4000, memory: Gi - 1 }, ['memory']],
    // Absent from free means none free.
    [{ 'nvidia.com/gpu': 1 }, { cpu: 4000 }, ['nvidia.com/gpu']],
    // A request of 0 always fits, even where free is absent or overcommitted.
    [{ 'nvidia.com/gpu': 0 }, {}, []],
    [{ cpu: 0 }, { cpu: -100 }, []],
    [{ cpu: 1 }, { cpu: -100 }, ['cpu']],
    // Sorted by name, whatever order the request lists them in.
    [{ memory: 2, cpu: 2, 'example.com/foo': 2 }, {}, ['cpu', 'example.com/foo', 'memory']],
    // Free resources nobody asked for do not matter.
    [{ cpu: 100 }, { cpu: 200, memory: -5 }, []],
  ];
  it.each(cases)('%j in %j -> %j', (request, free, short) => {
    expect(fitsIn(request, free)).toEqual(short);
  });

  const resources = fc.dictionary(
    fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu'),
    fc.nat({ max: 10_000 }),
  );

  it('a request always fits in itself, and still fits when more is free', () => {
    fc.assert(
      fc.property(resources, resources, (request, extra) => {
        expect(fitsIn(request, request)).toEqual([]);
        expect(fitsIn(request, addResources(request, extra))).toEqual([]);
      }),
    );
  });

  it('names exactly the resources whose request exceeds what is free', () => {
    fc.assert(
      fc.property(resources, resources, (request, free) => {
        const short = fitsIn(request, free);
        for (const [name, wanted] of Object.entries(request)) {
          expect(short.includes(name)).toBe(wanted > (free[name] ?? 0));
        }
        expect(short.every((name) => name in request)).toBe(true);
      }),
    );
  });
});
