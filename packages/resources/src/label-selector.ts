/**
 * Kubernetes label selectors in their text form (`kubectl -l`, `labels.Parse` in
 * k8s.io/apimachinery/pkg/labels/selector.go): `region=eu,tier in (a,b),!gpu`.
 *
 * The parser follows the Go lexer and parser token for token, so it accepts and rejects
 * the same texts, with two deliberate differences:
 * - the Gt/Lt operators (`a>1`, `a<1`) are refused, as node-affinity-only extras;
 * - requirements keep the order they were written in (Go sorts them by key), so messages
 *   echo the selector as its author wrote it.
 * Values of `in`/`notin` are de-duplicated and sorted, as Go's string set does.
 */

export interface LabelRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals';
  /** One value for Equals/NotEquals, at least one for In/NotIn, none for Exists/DoesNotExist. */
  values: string[];
}

/** All requirements must hold (AND); no requirement at all matches everything. */
export interface LabelSelector {
  requirements: LabelRequirement[];
}

type TokenKind = 'word' | 'end' | '!' | '=' | '==' | '!=' | '(' | ')' | ',' | '>' | '<';

interface Token {
  kind: TokenKind;
  text: string;
  /** 0-based offset of the token's first character in the selector text. */
  position: number;
}

// Whitespace and the characters that end a word, exactly as the Go lexer has them.
const whitespace = new Set([' ', '\t', '\r', '\n']);
const symbols = new Set(['=', '!', '(', ')', ',', '>', '<']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (true) {
    while (at < text.length && whitespace.has(text[at]!)) at++;
    if (at >= text.length) {
      tokens.push({ kind: 'end', text: '', position: at });
      return tokens;
    }
    const start = at;
    const char = text[at]!;
    if (symbols.has(char)) {
      // Longest operator first: "!=" and "==" are the only two-character ones.
      const pair = text.slice(at, at + 2);
      const kind = pair === '!=' || pair === '==' ? pair : (char as TokenKind);
      at += kind.length;
      tokens.push({ kind, text: kind, position: start });
      continue;
    }
    while (at < text.length && !whitespace.has(text[at]!) && !symbols.has(text[at]!)) at++;
    tokens.push({ kind: 'word', text: text.slice(start, at), position: start });
  }
}

class SelectorSyntaxError extends Error {}

function describeToken(token: Token): string {
  return token.kind === 'end' ? 'end of input' : `"${token.text}"`;
}

function fail(token: Token, message: string): never {
  throw new SelectorSyntaxError(`at position ${token.position}: ${message}, found ${describeToken(token)}`);
}

function failAt(token: Token, message: string): never {
  throw new SelectorSyntaxError(`at position ${token.position}: ${message}`);
}

/**
 * Parses selector text as `kubectl -l` does. On failure, `problem` says where (a 0-based
 * character offset, as JSON.parse reports it) and what was expected, e.g.
 * `at position 10: expected "," or ")" after a value, found end of input`.
 */
export function parseLabelSelector(
  text: string,
): { ok: true; selector: LabelSelector } | { ok: false; problem: string } {
  try {
    return { ok: true, selector: { requirements: parseRequirements(tokenize(text)) } };
  } catch (error) {
    if (error instanceof SelectorSyntaxError) return { ok: false, problem: error.message };
    throw error;
  }
}

function parseRequirements(tokens: readonly Token[]): LabelRequirement[] {
  let index = 0;
  const peek = (): Token => tokens[index]!;
  // The end token is never consumed, so index never runs past it.
  const next = (): Token => (peek().kind === 'end' ? peek() : tokens[index++]!);

  const requirements: LabelRequirement[] = [];
  if (peek().kind === 'end') return requirements;
  if (peek().kind !== 'word' && peek().kind !== '!')
    fail(peek(), 'expected a label key, "!" or end of input');
  while (true) {
    requirements.push(parseRequirement(peek, next));
    const after = next();
    if (after.kind === 'end') return requirements;
    if (after.kind !== ',') fail(after, 'expected "," or end of input after a requirement');
    if (peek().kind !== 'word' && peek().kind !== '!') fail(peek(), 'expected a label key or "!" after ","');
  }
}

function parseRequirement(peek: () => Token, next: () => Token): LabelRequirement {
  const negated = peek().kind === '!';
  if (negated) next();
  const keyToken = next();
  if (keyToken.kind !== 'word')
    fail(keyToken, negated ? 'expected a label key after "!"' : 'expected a label key');
  const key = keyToken.text;
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) failAt(keyToken, `invalid label key "${key}": ${keyProblem}`);

  const complete = peek().kind === 'end' || peek().kind === ',';
  if (negated) {
    if (!complete)
      fail(peek(), `expected "," or end of input after "!${key}", which takes no operator or value`);
    return { key, operator: 'DoesNotExist', values: [] };
  }
  if (complete) return { key, operator: 'Exists', values: [] };

  const operatorToken = next();
  if (operatorToken.kind === 'word' && (operatorToken.text === 'in' || operatorToken.text === 'notin')) {
    const operator = operatorToken.text === 'in' ? 'In' : 'NotIn';
    return { key, operator, values: parseValueSet(operatorToken.text, peek, next) };
  }
  if (operatorToken.kind === '=' || operatorToken.kind === '==' || operatorToken.kind === '!=') {
    const operator = operatorToken.kind === '!=' ? 'NotEquals' : 'Equals';
    return { key, operator, values: [parseExactValue(peek, next)] };
  }
  if (operatorToken.kind === '>' || operatorToken.kind === '<') {
    failAt(
      operatorToken,
      `the "${operatorToken.kind}" operator is not supported here; use =, ==, !=, in, notin, a bare key or "!key"`,
    );
  }
  fail(operatorToken, `expected =, ==, !=, in or notin after label key "${key}"`);
}

/** `( v1, v2, ... )`, where any value may be empty: `()` and `(a,)` hold the empty value. */
function parseValueSet(operator: string, peek: () => Token, next: () => Token): string[] {
  const open = next();
  if (open.kind !== '(') fail(open, `expected "(" after "${operator}"`);
  const values = new Set<string>();
  while (true) {
    const valueToken = peek();
    if (valueToken.kind === 'word') {
      next();
      checkValue(valueToken);
      values.add(valueToken.text);
    } else {
      values.add('');
    }
    const separator = next();
    if (separator.kind === ')') break;
    if (separator.kind !== ',') {
      fail(
        separator,
        valueToken.kind === 'word' ? 'expected "," or ")" after a value' : 'expected a value, "," or ")"',
      );
    }
  }
  return [...values].sort(compareStrings);
}

function parseExactValue(peek: () => Token, next: () => Token): string {
  if (peek().kind === 'end' || peek().kind === ',') return '';
  const valueToken = next();
  if (valueToken.kind !== 'word') fail(valueToken, 'expected a label value');
  checkValue(valueToken);
  return valueToken.text;
}

function checkValue(token: Token): void {
  const problem = labelValueProblem(token.text);
  if (problem) failAt(token, `invalid label value "${token.text}": ${problem}`);
}

// k8s.io/apimachinery/pkg/api/validate/content: IsLabelKey, IsLabelValue, IsDNS1123Subdomain.
const labelNamePattern = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dnsSubdomainPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelNameRule =
  "63 characters or fewer: letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

/** Why a label key is not valid in Kubernetes, or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a key is [prefix/]name with at most one "/"';
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') return 'the prefix before "/" must not be empty';
    if (prefix.length > 253 || !dnsSubdomainPattern.test(prefix)) {
      return "the prefix must be a DNS subdomain of 253 characters or fewer: lowercase letters, digits, '-' and '.' (e.g. \"example.com\")";
    }
  }
  if (name === '') return 'the name must not be empty';
  if (name.length > 63 || !labelNamePattern.test(name)) return `the name must be ${labelNameRule}`;
  return undefined;
}

/** Why a label value is not valid in Kubernetes, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !labelNamePattern.test(value)) return `a value must be empty or ${labelNameRule}`;
  return undefined;
}

/**
 * Whether `labels` satisfy every requirement, with Kubernetes semantics: `!=` and `notin`
 * also match when the key is absent; an empty selector matches everything, even no labels.
 */
export function labelsMatch(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const present = labels ?? {};
  return selector.requirements.every((requirement) => requirementMatches(requirement, present));
}

function requirementMatches(
  { key, operator, values }: LabelRequirement,
  labels: Record<string, string>,
): boolean {
  // Own properties only: a label set is data, "constructor" is not a label it has.
  const has = Object.hasOwn(labels, key);
  const listed = has && values.includes(labels[key]!);
  switch (operator) {
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Equals':
    case 'In':
      return listed;
    case 'NotEquals':
    case 'NotIn':
      return !listed;
  }
}

/**
 * Canonical text for a selector, e.g. `region=eu,tier in (a,b),!gpu`: requirements in
 * their order, `==` written as `=`, set values sorted and de-duplicated. It parses back to
 * an equivalent selector (`in`/`notin` with no values at all, which Kubernetes refuses,
 * come back holding the empty value).
 */
export function describeLabelSelector(selector: LabelSelector): string {
  return selector.requirements.map(describeRequirement).join(',');
}

function describeRequirement({ key, operator, values }: LabelRequirement): string {
  switch (operator) {
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Equals':
      return `${key}=${values[0] ?? ''}`;
    case 'NotEquals':
      return `${key}!=${values[0] ?? ''}`;
    case 'In':
    case 'NotIn':
      return `${key} ${operator === 'In' ? 'in' : 'notin'} (${[...new Set(values)].sort(compareStrings).join(',')})`;
  }
}

// Code-unit order, which is Go's byte order for the ASCII that label values are made of.
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
