import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeLabelSelector,
  type LabelRequirement,
  type LabelSelector,
  labelsMatch,
  parseLabelSelector,
} from '../src/label-selector.ts';

const req = (key: string, operator: LabelRequirement['operator'], ...values: string[]): LabelRequirement => ({
  key,
  operator,
  values,
});

function parsed(text: string): LabelSelector {
  const result = parseLabelSelector(text);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(text)} to parse: ${result.problem}`);
  return result.selector;
}

function problemOf(text: string): string {
  const result = parseLabelSelector(text);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
  return result.problem;
}

/** Sort values and de-duplicate, as a set would: the equivalence parse/describe promise. */
function normalized(selector: LabelSelector): LabelSelector {
  return {
    requirements: selector.requirements.map((r) => ({ ...r, values: [...new Set(r.values)].sort() })),
  };
}

describe('parseLabelSelector accepts what labels.Parse accepts', () => {
  // Each row was run through k8s.io/apimachinery v0.35.4 labels.ParseToRequirements; Go sorts
  // requirements by key, we keep them in written order (the only difference in these rows).
  const accepted: [string, LabelRequirement[]][] = [
    ['', []],
    ['   ', []],
    ['a', [req('a', 'Exists')]],
    ['!a', [req('a', 'DoesNotExist')]],
    ['! a', [req('a', 'DoesNotExist')]],
    ['a=b', [req('a', 'Equals', 'b')]],
    ['a==b', [req('a', 'Equals', 'b')]],
    ['a!=b', [req('a', 'NotEquals', 'b')]],
    ['a in (x,y)', [req('a', 'In', 'x', 'y')]],
    ['a notin (x,y)', [req('a', 'NotIn', 'x', 'y')]],
    ['a in (b,b,a)', [req('a', 'In', 'a', 'b')]],
    ['a in(b)', [req('a', 'In', 'b')]],
    ['a notin(b)', [req('a', 'NotIn', 'b')]],
    ['a in ( x , y )', [req('a', 'In', 'x', 'y')]],
    ['a in ()', [req('a', 'In', '')]],
    ['a notin ()', [req('a', 'NotIn', '')]],
    ['a in (,)', [req('a', 'In', '')]],
    ['a in (b,)', [req('a', 'In', '', 'b')]],
    ['a in (,b)', [req('a', 'In', '', 'b')]],
    ['a in (b,,)', [req('a', 'In', '', 'b')]],
    ['a=', [req('a', 'Equals', '')]],
    ['a==', [req('a', 'Equals', '')]],
    ['a!=', [req('a', 'NotEquals', '')]],
    ['a = ', [req('a', 'Equals', '')]],
    ['a=,b', [req('a', 'Equals', ''), req('b', 'Exists')]],
    ['a=b,c!=d', [req('a', 'Equals', 'b'), req('c', 'NotEquals', 'd')]],
    [' a = b , c ', [req('a', 'Equals', 'b'), req('c', 'Exists')]],
    ['a\t=\tb', [req('a', 'Equals', 'b')]],
    ['a\r\n,b', [req('a', 'Exists'), req('b', 'Exists')]],
    ['a ==b', [req('a', 'Equals', 'b')]],
    ['a= b', [req('a', 'Equals', 'b')]],
    [
      'x in (foo,,baz),y,z notin ()',
      [req('x', 'In', '', 'baz', 'foo'), req('y', 'Exists'), req('z', 'NotIn', '')],
    ],
    ['a=b,!c,d in (e)', [req('a', 'Equals', 'b'), req('c', 'DoesNotExist'), req('d', 'In', 'e')]],
    ['a!=b,!c', [req('a', 'NotEquals', 'b'), req('c', 'DoesNotExist')]],
    ['z=1,a=2', [req('z', 'Equals', '1'), req('a', 'Equals', '2')]],
    ['a=1,a=2', [req('a', 'Equals', '1'), req('a', 'Equals', '2')]],
    [
      'topology.kubernetes.io/region=eu-west-1',
      [req('topology.kubernetes.io/region', 'Equals', 'eu-west-1')],
    ],
    ['example.com/MyName', [req('example.com/MyName', 'Exists')]],
    ['a.b.c/d', [req('a.b.c/d', 'Exists')]],
    ['a_b.c-d', [req('a_b.c-d', 'Exists')]],
    ['x.y_z=1', [req('x.y_z', 'Equals', '1')]],
    ['1a=2', [req('1a', 'Equals', '2')]],
    ['a=b_c.d-e', [req('a', 'Equals', 'b_c.d-e')]],
    // "in" and "notin" are operators only where an operator is expected.
    ['in', [req('in', 'Exists')]],
    ['notin', [req('notin', 'Exists')]],
    ['!in', [req('in', 'DoesNotExist')]],
    ['in=in', [req('in', 'Equals', 'in')]],
    ['x=notin', [req('x', 'Equals', 'notin')]],
    ['x in (in,notin)', [req('x', 'In', 'in', 'notin')]],
    ['notin notin (in)', [req('notin', 'NotIn', 'in')]],
    ['a'.repeat(63), [req('a'.repeat(63), 'Exists')]],
    [`a=${'b'.repeat(63)}`, [req('a', 'Equals', 'b'.repeat(63))]],
    [`${'p'.repeat(253)}/a`, [req(`${'p'.repeat(253)}/a`, 'Exists')]],
  ];
  it.each(accepted)('%j', (text, requirements) => {
    expect(parseLabelSelector(text)).toEqual({ ok: true, selector: { requirements } });
  });
});

describe('parseLabelSelector rejects what labels.Parse rejects, saying where and why', () => {
  // Go rejects every row too (k8s.io/apimachinery v0.35.4).
  const rejected: [string, string][] = [
    [',', 'at position 0: expected a label key, "!" or end of input, found ","'],
    [',a', 'at position 0: expected a label key, "!" or end of input, found ","'],
    ['(', 'at position 0: expected a label key, "!" or end of input, found "("'],
    ['a,', 'at position 2: expected a label key or "!" after ",", found end of input'],
    ['a=b,', 'at position 4: expected a label key or "!" after ",", found end of input'],
    ['a in (x),', 'at position 9: expected a label key or "!" after ",", found end of input'],
    ['a,,b', 'at position 2: expected a label key or "!" after ",", found ","'],
    ['a b', 'at position 2: expected =, ==, !=, in or notin after label key "a", found "b"'],
    ['a!b', 'at position 1: expected =, ==, !=, in or notin after label key "a", found "!"'],
    ['a=b c', 'at position 4: expected "," or end of input after a requirement, found "c"'],
    ['a=b=c', 'at position 3: expected "," or end of input after a requirement, found "="'],
    ['a=b)', 'at position 3: expected "," or end of input after a requirement, found ")"'],
    ['a in (b))', 'at position 8: expected "," or end of input after a requirement, found ")"'],
    ['!', 'at position 1: expected a label key after "!", found end of input'],
    ['!!a', 'at position 1: expected a label key after "!", found "!"'],
    [
      '!a=b',
      'at position 2: expected "," or end of input after "!a", which takes no operator or value, found "="',
    ],
    [
      '!a in (b)',
      'at position 3: expected "," or end of input after "!a", which takes no operator or value, found "in"',
    ],
    ['a=!b', 'at position 2: expected a label value, found "!"'],
    ['a=(b)', 'at position 2: expected a label value, found "("'],
    ['a=>b', 'at position 2: expected a label value, found ">"'],
    ['a!==b', 'at position 3: expected a label value, found "="'],
    ['a===b', 'at position 3: expected a label value, found "="'],
    ['a in', 'at position 4: expected "(" after "in", found end of input'],
    ['a in b', 'at position 5: expected "(" after "in", found "b"'],
    ['x in in', 'at position 5: expected "(" after "in", found "in"'],
    ['a notin x', 'at position 8: expected "(" after "notin", found "x"'],
    ['a in (b', 'at position 7: expected "," or ")" after a value, found end of input'],
    ['tier in (a', 'at position 10: expected "," or ")" after a value, found end of input'],
    ['a in (b,c', 'at position 9: expected "," or ")" after a value, found end of input'],
    ['a in (b c)', 'at position 8: expected "," or ")" after a value, found "c"'],
    ['a in ((b))', 'at position 6: expected a value, "," or ")", found "("'],
    ['a in (b,=)', 'at position 8: expected a value, "," or ")", found "="'],
    ['/x', 'at position 0: invalid label key "/x": the prefix before "/" must not be empty'],
    ['a/b/c', 'at position 0: invalid label key "a/b/c": a key is [prefix/]name with at most one "/"'],
    ['a/', 'at position 0: invalid label key "a/": the name must not be empty'],
    ['k8s.io/', 'at position 0: invalid label key "k8s.io/": the name must not be empty'],
    ['Example.com/x', 'at position 0: invalid label key "Example.com/x": the prefix must be a DNS subdomain'],
    ['A.b/c', 'at position 0: invalid label key "A.b/c": the prefix must be a DNS subdomain'],
    ['a..b/c', 'at position 0: invalid label key "a..b/c": the prefix must be a DNS subdomain'],
    ['-a.b/c', 'at position 0: invalid label key "-a.b/c": the prefix must be a DNS subdomain'],
    [`${'p'.repeat(254)}/a`, 'the prefix must be a DNS subdomain of 253 characters or fewer'],
    ['-a', 'at position 0: invalid label key "-a": the name must be 63 characters or fewer'],
    ['a-', 'at position 0: invalid label key "a-": the name must be 63 characters or fewer'],
    ['x, é', 'at position 3: invalid label key "é": the name must be'],
    ['a'.repeat(64), `invalid label key "${'a'.repeat(64)}": the name must be 63 characters or fewer`],
    ['a=-b', 'at position 2: invalid label value "-b": a value must be empty or 63 characters or fewer'],
    ['a=b-', 'at position 2: invalid label value "b-": a value must be empty or 63 characters or fewer'],
    ['a=é', 'at position 2: invalid label value "é"'],
    [`a=${'b'.repeat(64)}`, 'a value must be empty or 63 characters or fewer'],
    ['a in (b,-c)', 'at position 8: invalid label value "-c"'],
    // Spaces are separators, never part of a key or value.
    ['a b=c', 'at position 2: expected =, ==, !=, in or notin after label key "a", found "b"'],
  ];
  it.each(rejected)('%j', (text, problem) => {
    expect(problemOf(text)).toContain(problem);
  });

  it('spells out the whole rule for a bad name, so the fix is obvious', () => {
    expect(problemOf('gpu-')).toBe(
      "at position 0: invalid label key \"gpu-\": the name must be 63 characters or fewer: letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
    );
  });

  it('refuses the Gt/Lt operators, which Go accepts for integers, instead of ignoring them', () => {
    // Deliberate difference: labels.Parse accepts "a>1" and "a<1"; our requirement type has no Gt/Lt.
    expect(problemOf('a>1')).toBe(
      'at position 1: the ">" operator is not supported here; use =, ==, !=, in, notin, a bare key or "!key"',
    );
    expect(problemOf('region=eu,a<1')).toContain('at position 11: the "<" operator is not supported');
  });
});

describe('labelsMatch', () => {
  const labels = { region: 'eu', tier: 'web', empty: '' };
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', undefined, true],
    ['', {}, true],
    ['', labels, true],
    ['region', labels, true],
    ['zone', labels, false],
    ['!zone', labels, true],
    ['!region', labels, false],
    ['!zone', undefined, true],
    ['region=eu', labels, true],
    ['region==eu', labels, true],
    ['region=us', labels, false],
    ['zone=eu', labels, false],
    ['region!=us', labels, true],
    ['region!=eu', labels, false],
    // k8s: != and notin also match when the key is absent.
    ['zone!=eu', labels, true],
    ['zone!=eu', undefined, true],
    ['zone notin (a)', labels, true],
    ['region in (us,eu)', labels, true],
    ['region in (us,ap)', labels, false],
    ['zone in (eu)', labels, false],
    ['region notin (us,eu)', labels, false],
    ['region notin (us,ap)', labels, true],
    ['empty=', labels, true],
    ['empty', labels, true],
    ['empty in ()', labels, true],
    ['zone in ()', labels, false],
    ['empty!=', labels, false],
    ['region=', labels, false],
    ['region=eu,tier=web', labels, true],
    ['region=eu,tier=db', labels, false],
    ['region=eu,!gpu,tier in (web,db)', labels, true],
    // Keys are compared exactly, and inherited object properties are not labels.
    ['Region=eu', labels, false],
    ['constructor', labels, false],
    ['!toString', labels, true],
    ['hasOwnProperty!=x', labels, true],
  ];
  it.each(cases)('%j against %j is %s', (text, input, expected) => {
    expect(labelsMatch(parsed(text), input)).toBe(expected);
  });

  it('treats a label called __proto__ as data, present or not', () => {
    // Not a valid key, so only a hand-built selector can ask; labels from JSON can hold it.
    const selector = { requirements: [req('__proto__', 'Equals', 'x')] };
    expect(labelsMatch(selector, JSON.parse('{"__proto__":"x"}') as Record<string, string>)).toBe(true);
    expect(labelsMatch(selector, {})).toBe(false);
  });
});

describe('describeLabelSelector', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['region=eu, tier in (b,a,b), !gpu', 'region=eu,tier in (a,b),!gpu'],
    ['a==b', 'a=b'],
    [' a != b ', 'a!=b'],
    ['a=', 'a='],
    ['a!=', 'a!='],
    ['a in ()', 'a in ()'],
    ['a notin (,z,y)', 'a notin (,y,z)'],
    ['z,a', 'z,a'],
    ['topology.kubernetes.io/zone notin (eu-1a)', 'topology.kubernetes.io/zone notin (eu-1a)'],
    ['in=in,notin notin (in)', 'in=in,notin notin (in)'],
  ];
  it.each(cases)('%j reads %j', (text, canonical) => {
    expect(describeLabelSelector(parsed(text))).toBe(canonical);
  });

  it('sorts and de-duplicates values of hand-built selectors too', () => {
    expect(describeLabelSelector({ requirements: [req('k', 'In', 'b', 'a', 'b')] })).toBe('k in (a,b)');
  });
});

// Arbitraries for valid selectors, following the Go validation rules.
const labelName = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?$/);
const labelKey = fc.oneof(
  labelName,
  fc.constantFrom('in', 'notin', 'region', 'topology.kubernetes.io/zone'),
  fc
    .tuple(fc.array(dnsLabel, { minLength: 1, maxLength: 4 }), labelName)
    .map(([p, n]) => `${p.join('.')}/${n}`),
);
const labelValue = fc.oneof(fc.constant(''), fc.constantFrom('in', 'notin', 'eu', 'us'), labelName);
const requirement: fc.Arbitrary<LabelRequirement> = fc.oneof(
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const),
    values: fc.constant<string[]>([]),
  }),
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('Equals' as const, 'NotEquals' as const),
    values: labelValue.map((v) => [v]),
  }),
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('In' as const, 'NotIn' as const),
    values: fc.array(labelValue, { minLength: 1, maxLength: 4 }),
  }),
);
const selector: fc.Arbitrary<LabelSelector> = fc.record({
  requirements: fc.array(requirement, { maxLength: 5 }),
});
const labelSet = fc.dictionary(
  fc.oneof(labelKey, fc.constantFrom('in', 'region')),
  fc.oneof(labelValue, fc.constantFrom('eu', 'us')),
  { maxKeys: 5 },
);
/** Text built from the characters selectors are made of, so the parser's corners get hit. */
const selectorish = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      'in',
      'notin',
      '!',
      '=',
      '==',
      '!=',
      '(',
      ')',
      ',',
      ' ',
      '/',
      '.',
      '-',
      'k8s.io',
      '>',
    ),
    {
      maxLength: 14,
    },
  )
  .map((parts) => parts.join(''));

describe('properties', () => {
  it('describeLabelSelector output re-parses to an equivalent selector', () => {
    fc.assert(
      fc.property(selector, (s) => {
        expect(parsed(describeLabelSelector(s))).toEqual(normalized(s));
      }),
      { numRuns: 500 },
    );
  });

  it('the re-parsed selector matches exactly the same label sets', () => {
    fc.assert(
      fc.property(selector, labelSet, (s, labels) => {
        expect(labelsMatch(parsed(describeLabelSelector(s)), labels)).toBe(labelsMatch(s, labels));
      }),
      { numRuns: 500 },
    );
  });

  it('whitespace around tokens changes nothing', () => {
    fc.assert(
      fc.property(selector, fc.constantFrom(' ', '  ', '\t', ' \n '), (s, space) => {
        const spaced = describeLabelSelector(s)
          .replace(/([=!(),]+)/g, `${space}$1${space}`)
          .replace(/^/, space);
        expect(parsed(spaced)).toEqual(normalized(s));
      }),
      { numRuns: 300 },
    );
  });

  it('a selector matches exactly when every one of its requirements does', () => {
    fc.assert(
      fc.property(selector, labelSet, (s, labels) => {
        const each = s.requirements.every((r) => labelsMatch({ requirements: [r] }, labels));
        expect(labelsMatch(s, labels)).toBe(each);
      }),
      { numRuns: 300 },
    );
  });

  it('Exists/DoesNotExist, Equals/NotEquals and In/NotIn are complements', () => {
    const opposite = { Exists: 'DoesNotExist', Equals: 'NotEquals', In: 'NotIn' } as const;
    fc.assert(
      fc.property(requirement, labelSet, (r, labels) => {
        const key = r.operator as keyof typeof opposite;
        fc.pre(key in opposite);
        const negated = { ...r, operator: opposite[key] };
        expect(labelsMatch({ requirements: [negated] }, labels)).toBe(
          !labelsMatch({ requirements: [r] }, labels),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('never throws; what parses describes and re-parses to itself, what does not says where', () => {
    fc.assert(
      fc.property(fc.oneof(selectorish, fc.string({ maxLength: 20 })), (text) => {
        const result = parseLabelSelector(text);
        if (result.ok) {
          expect(parsed(describeLabelSelector(result.selector))).toEqual(result.selector);
        } else {
          const position = /^at position (\d+): /.exec(result.problem);
          expect(position, result.problem).not.toBeNull();
          expect(Number(position![1])).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
