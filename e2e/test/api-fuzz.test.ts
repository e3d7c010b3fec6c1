// Fuzzing the admin API's routes: random and near-valid bodies, path parameters, query strings
// and content types, sent as fleet-admin (who may do everything, so inputs reach validation and
// the handlers, not just authorization) to the real API against the real sandbox. Properties:
// never a 5xx; every refusal is a complete application/problem+json whose status is the HTTP
// status; validation errors name body./querystring./params. paths; a 2xx only on read routes and
// the preview; no WorkerCluster or Secret in jobrelay-system is created, changed or deleted over
// the whole run (every mutation targets a cluster that does not exist); the process still
// answers afterwards and Object.prototype is untouched.
import { workerClusterGroup, workerClusterPlural, workerClusterVersion } from '@jobrelay/clusters';
import { sandboxRayClusterSpec } from '@jobrelay/sandbox';
import { CustomObjectsApi, type KubeConfig, Watch } from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
} from '../src/kube-test-helpers.ts';

// Fixed so that a failure names inputs anyone can replay; JOBRELAY_API_FUZZ_SEED explores others.
const SEED = Number(process.env.JOBRELAY_API_FUZZ_SEED ?? 20260427);
// Scaled down (JOBRELAY_API_FUZZ_SCALE=0.05) for a quick look; 1 is the full run.
const SCALE = Number(process.env.JOBRELAY_API_FUZZ_SCALE ?? 1);
const MUTATING_RUNS = Math.ceil(1_000 * SCALE);
const READ_RUNS = Math.ceil(300 * SCALE);
const systemNamespace = 'jobrelay-system';
/** Nothing listens on port 1: a kubeconfig naming it is refused quickly by the probe, never saved. */
const unreachableServer = 'https://127.0.0.1:1';

const sandbox = testSandbox();
let api: ApiHarness;
let management: ClusterClients;
let guard: WriteGuard;
/** A real dispatched Job (nobody places it: no controller runs here), so reads reach handlers. */
let jobNamespace: string;
const realJob = 'fuzz-pending';
/** WorkerClusters that exist: no mutation may ever name one. */
const existingClusters = new Set<string>();
/** A continue token the API really issued (for /clusters with limit=1). */
let issuedToken = '';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface FuzzRequest {
  method: Method;
  url: string;
  payload?: string;
  contentType?: string;
}

interface Problem {
  type: unknown;
  title: unknown;
  status: unknown;
  detail: unknown;
  code: unknown;
  errors?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Watching what must not change
// ---------------------------------------------------------------------------------------------

interface WriteGuard {
  /** Every watch event seen on WorkerClusters and jobrelay-system Secrets since the start. */
  events: string[];
  /** Set when a watch ended and could not resume: from then on, changes could go unseen. */
  ended: string | undefined;
  /** How often a watch was resumed after an idle timeout. */
  resumed: number;
  snapshot(): Promise<Map<string, string>>;
  initial: Map<string, string>;
  stop(): void;
}

/** name -> resourceVersion of every WorkerCluster and every Secret in jobrelay-system. */
async function snapshot(kc: KubeConfig, clients: ClusterClients) {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const clusters = (await custom.listClusterCustomObject({
    group: workerClusterGroup,
    version: workerClusterVersion,
    plural: workerClusterPlural,
  })) as {
    metadata: { resourceVersion: string };
    items: Array<{ metadata: { name: string; resourceVersion: string } }>;
  };
  const secrets = await clients.core.listNamespacedSecret({ namespace: systemNamespace });
  const versions = new Map<string, string>();
  for (const wc of clusters.items)
    versions.set(`WorkerCluster/${wc.metadata.name}`, wc.metadata.resourceVersion);
  for (const s of secrets.items) versions.set(`Secret/${s.metadata!.name}`, s.metadata!.resourceVersion!);
  return {
    versions,
    clusterListVersion: clusters.metadata.resourceVersion,
    secretListVersion: secrets.metadata!.resourceVersion!,
  };
}

/**
 * Watches both collections from the resourceVersion of a list, so any create, update or delete
 * after it is an event, even one undone before the end (which a before/after snapshot misses).
 */
async function startWriteGuard(clients: ClusterClients): Promise<WriteGuard> {
  const kc = clients.kubeConfig;
  const first = await snapshot(kc, clients);
  const events: string[] = [];
  const controllers: AbortController[] = [];
  let stopping = false;
  const guard: WriteGuard = {
    events,
    ended: undefined,
    resumed: 0,
    initial: first.versions,
    snapshot: async () => (await snapshot(kc, clients)).versions,
    stop: () => {
      stopping = true;
      for (const c of controllers) c.abort();
    },
  };
  const watch = new Watch(kc);
  const open = async (path: string, resourceVersion: string, kind: string): Promise<void> => {
    let last = resourceVersion;
    const start = async (): Promise<void> => {
      const controller = await watch.watch(
        path,
        { resourceVersion: last, allowWatchBookmarks: true },
        (phase, object: { metadata?: { name?: string; resourceVersion?: string } }) => {
          if (object?.metadata?.resourceVersion) last = object.metadata.resourceVersion;
          // A bookmark only says how far the watch got; it is no change.
          if (phase === 'BOOKMARK') return;
          events.push(`${phase} ${kind}/${object?.metadata?.name} rv=${object?.metadata?.resourceVersion}`);
        },
        (err: unknown) => {
          if (stopping) return;
          // client-node ends a watch after 30 s without a byte, the apiserver after its own
          // timeout: resume from the last version seen, so nothing in between goes unseen.
          if (err === null || err === undefined || (err as { name?: unknown }).name === 'TimeoutError') {
            guard.resumed += 1;
            start().catch((e: unknown) => {
              guard.ended = `${kind} watch could not resume: ${String(e)}`;
            });
            return;
          }
          guard.ended = `${kind} watch ended: ${String(err)}`;
        },
      );
      controllers.push(controller);
    };
    await start();
  };
  await Promise.all([
    open(
      `/apis/${workerClusterGroup}/${workerClusterVersion}/${workerClusterPlural}`,
      first.clusterListVersion,
      'WorkerCluster',
    ),
    open(`/api/v1/namespaces/${systemNamespace}/secrets`, first.secretListVersion, 'Secret'),
  ]);
  return guard;
}

async function expectNothingWritten(): Promise<void> {
  expect(guard.ended).toBeUndefined();
  expect(guard.events).toEqual([]);
  expect(await guard.snapshot()).toEqual(guard.initial);
}

// ---------------------------------------------------------------------------------------------
// Sending and judging
// ---------------------------------------------------------------------------------------------

/** Status counts per route, to show (and assert) how far the fuzz got. */
const seen = new Map<string, Map<number, number>>();

function describeRequest(request: FuzzRequest): string {
  const payload =
    request.payload === undefined
      ? '(no body)'
      : request.payload.length > 300
        ? `${JSON.stringify(request.payload.slice(0, 300))}... (${request.payload.length} chars)`
        : JSON.stringify(request.payload);
  return `${request.method} ${request.url} content-type=${JSON.stringify(request.contentType)} body=${payload}`;
}

async function send(request: FuzzRequest): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  return api.call('fleet-admin', request.method, request.url, request.payload, headers);
}

/**
 * The properties every answer must have. `route` groups counts; `may2xx` is false for routes that
 * change something, which must refuse every fuzzed input here (they all name absent clusters).
 */
async function judge(route: string, request: FuzzRequest, may2xx: boolean): Promise<ApiResponse> {
  const began = Date.now();
  if (process.env.JOBRELAY_API_FUZZ_TRACE)
    process.stderr.write(`> ${describeRequest(request).slice(0, 200)}\n`);
  let timer: NodeJS.Timeout | undefined;
  const response = await Promise.race([
    send(request),
    new Promise<never>((_, reject) => {
      // Every route here answers at once or refuses: a hang is a failure, not a slow pass.
      timer = setTimeout(
        () => reject(new Error(`no answer within 20s: ${describeRequest(request)}`)),
        20_000,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  if (process.env.JOBRELAY_API_FUZZ_TRACE)
    process.stderr.write(`< ${response.status} ${Date.now() - began}ms\n`);
  const counts = seen.get(route) ?? new Map<number, number>();
  counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
  seen.set(route, counts);
  const fail = (why: string) =>
    new Error(
      `${why}\n  request: ${describeRequest(request)}\n  answer: ${response.status} ${response.body.slice(0, 500)}`,
    );
  if (response.status >= 500) throw fail('a 5xx answer');
  if (response.status < 200 || (response.status >= 300 && response.status < 400))
    throw fail('neither a success nor a refusal');
  if (response.status < 300) {
    if (!may2xx) throw fail('a mutating route succeeded on fuzzed input naming an absent cluster');
    return response;
  }
  const contentType = String(response.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/problem+json')) throw fail(`content-type ${contentType}`);
  let problem: Problem;
  try {
    problem = JSON.parse(response.body) as Problem;
  } catch {
    throw fail('the problem body is not JSON');
  }
  if (problem.status !== response.status) throw fail('problem.status differs from the HTTP status');
  for (const field of ['type', 'title', 'detail', 'code'] as const) {
    if (typeof problem[field] !== 'string' || (problem[field] as string).length === 0)
      throw fail(`problem.${field} is missing or empty`);
  }
  if (problem.type !== `https://jobrelay.dev/problems/${problem.code}`)
    throw fail('problem.type does not name its code');
  if (problem.code === 'validation-failed') {
    const errors = problem.errors;
    if (!Array.isArray(errors) || errors.length === 0) throw fail('validation-failed without errors');
    for (const error of errors as Array<{ path?: unknown; message?: unknown }>) {
      if (typeof error.path !== 'string' || !/^(body|querystring|params)(\.|$)/.test(error.path))
        throw fail(`validation error path ${JSON.stringify(error.path)}`);
      if (typeof error.message !== 'string' || error.message.length === 0)
        throw fail('validation error without message');
    }
  }
  return response;
}

async function fuzz(
  route: string,
  arbitrary: fc.Arbitrary<FuzzRequest>,
  numRuns: number,
  may2xx: boolean,
  salt: number,
) {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (request) => {
      await judge(route, request, may2xx);
    }),
    { numRuns, seed: SEED + salt, endOnFailure: false },
  );
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/** A JSON literal spliced into the body text as is: numbers JSON can write but JS cannot hold. */
class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
const raw = (text: string) => new RawJson(text);

/** Serializes with RawJson literals in place; a value JSON cannot carry (undefined) becomes ''. */
function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `@@raw-${raws.length - 1}@@`;
    }
    return v;
  });
  if (text === undefined) return '';
  return text.replace(/"@@raw-(\d+)@@"/g, (_m, i: string) => raws[Number(i)]!);
}

/** Sets a key as an own property even when it is __proto__ (assignment would set the prototype). */
function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

function withKey(key: string, value: unknown): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  defineKey(target, key, value);
  return target;
}

const protoKeys = ['__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString'];

const wrongTypes: fc.Arbitrary<unknown> = fc.oneof(
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);
const hugeNumbers: fc.Arbitrary<unknown> = fc.constantFrom(
  raw('1e400'),
  raw('-1e400'),
  raw('123456789012345678901234567890'),
  raw('-0'),
  raw('1E+2'),
  raw('0.1e1'),
  1e308,
  -1,
  -2147483649,
  Number.MAX_SAFE_INTEGER + 2,
  0.5,
  2 ** 53,
  -0.0001,
  101,
  1_000_001,
);
const nanLike: fc.Arbitrary<unknown> = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '0x10',
  '1_000',
  '',
  ' 1',
  '١٢٣',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '5',
  '-1',
);
const unicodeStrings: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '\u0000',
    '\uFEFFx',
    '\uD800',
    'Ω',
    '𝔘𝔫𝔦',
    'e\u0301',
    '\u202Eevil',
    'ａｂｃ',
    'İ',
    'a\nb',
    'a/b',
    '..',
  ),
);
const longStrings: fc.Arbitrary<unknown> = fc.constantFrom(
  'a'.repeat(63),
  'a'.repeat(64),
  'a'.repeat(254),
  'a'.repeat(318),
  'x'.repeat(70_000),
  `${'9'.repeat(5_000)}`,
);
const nestedJunk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(nested(50, 1, true), nested(100, 'x', false)),
  // Deeper nesting as text: the API parses it, the generators never walk it.
  fc.constantFrom(
    raw(`${'['.repeat(5_000)}${']'.repeat(5_000)}`),
    raw(`${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`),
  ),
  fc.jsonValue({ maxDepth: 6 }),
);
const protoJunk: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.constantFrom(...protoKeys),
    fc.constantFrom<unknown>({ polluted: true }, 'x', null, [1], { prototype: { polluted: true } }),
  )
  .map(([key, value]) => withKey(key, value));

/** Anything a field might be set to instead of what it should be. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  wrongTypes,
  hugeNumbers,
  nanLike,
  unicodeStrings,
  longStrings,
  nestedJunk,
  protoJunk,
  fc.jsonValue({ maxDepth: 3 }),
);

/** A deep copy that keeps RawJson literals and own __proto__ keys (structuredClone keeps neither). */
function clone(value: unknown): unknown {
  if (!value || typeof value !== 'object' || value instanceof RawJson) return value;
  // Entries, not map(): a mutation may have given an array an own `constructor` key.
  const copy = (Array.isArray(value) ? [] : {}) as Record<string, unknown>;
  for (const [key, v] of Object.entries(value)) defineKey(copy, key, clone(v));
  return copy;
}

/** Every path to a value inside `value` (the root is []). */
function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  const paths = [prefix];
  if (value && typeof value === 'object' && !(value instanceof RawJson))
    for (const key of Object.keys(value))
      paths.push(...pathsOf((value as Record<string, unknown>)[key], [...prefix, key]));
  return paths;
}

interface Mutation {
  pick: number;
  op: 'set' | 'delete' | 'extra';
  value: unknown;
  key: string;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('set', 'set', 'delete', 'extra'),
  value: junk,
  key: fc.oneof(
    fc.constantFrom(...protoKeys),
    fc.string({ maxLength: 12 }),
    fc.constantFrom('kind', 'status', 'spec', 'metadata'),
  ),
});

/** The base with one field replaced, removed, or an extra field added next to it. */
function mutate(base: unknown, m: Mutation): unknown {
  const copy = clone(base);
  const paths = pathsOf(copy);
  const path = paths[m.pick % paths.length]!;
  if (path.length === 0) {
    if (m.op === 'set') return m.value;
    if (m.op === 'delete') return undefined;
    if (copy && typeof copy === 'object') defineKey(copy as Record<string, unknown>, m.key, m.value);
    return copy;
  }
  let parent = copy as Record<string, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (m.op === 'set') defineKey(parent, last, m.value);
  else if (m.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (target && typeof target === 'object' && !Array.isArray(target))
      defineKey(target as Record<string, unknown>, m.key, m.value);
    else defineKey(parent, m.key, m.value);
  }
  return copy;
}

const nearValid = (base: fc.Arbitrary<unknown>) =>
  fc.tuple(base, fc.array(mutation, { minLength: 1, maxLength: 2 })).map(([b, ms]) => ms.reduce(mutate, b));

/** Text that is not JSON (or is barely), sent as application/json. */
const rawBodies: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    'null',
    '{',
    '[1,2',
    '{"name":',
    "{'name':'a'}",
    '\u0000',
    '\uFEFF{}',
    'NaN',
    'undefined',
    '{"a":1}{"b":2}',
    '{"name":"a","name":"b"}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"a":1,}',
    '[]',
    '"just a string"',
    '12',
    'true',
    '['.repeat(100_000),
    `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
    `{"kubeconfig":"${'a'.repeat(1_100_000)}"}`,
  ),
);
const jsonContentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; foo=bar',
);
const wrongContentTypes: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    undefined,
    '',
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonx',
    'application/merge-patch+json',
    'application/vnd.api+json',
    'json',
    '*/*',
    'application/',
    ';',
    'application/octet-stream',
  ),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 }),
);

type Payload = Pick<FuzzRequest, 'payload' | 'contentType'>;

/** A body: mostly the value as JSON, else non-JSON text as JSON, the JSON as another type, or none. */
const payloadOf = (values: fc.Arbitrary<unknown>): fc.Arbitrary<Payload> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc
        .tuple(values, jsonContentTypes)
        .map(([v, ct]) => ({ payload: toJsonText(v), contentType: ct })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(rawBodies, jsonContentTypes).map(([p, ct]) => ({ payload: p, contentType: ct })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(values, wrongContentTypes)
        .map(([v, ct]) => ({ payload: toJsonText(v), ...(ct === undefined ? {} : { contentType: ct }) })),
    },
    { weight: 1, arbitrary: fc.constant({}) },
  );

/** Removes control characters and whitespace (the URL parser drops tabs and newlines) and %XX escapes, thrice. */
function decoded(text: string): string {
  let value = text;
  for (let i = 0; i < 3; i++)
    value = value.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing exactly those
  return value.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
}

/** Whether text could name an existing WorkerCluster after any decoding or URL normalization. */
function namesExisting(text: string): boolean {
  const plain = decoded(text);
  return [...existingClusters].some((name) => plain.includes(name.toLowerCase()));
}

const absentName = fc
  .stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/)
  .map((name) => (existingClusters.has(name) ? `absent-${name}` : name));

/** A path segment for :name — valid absent names, encoded and raw junk, dots, slashes, empties. */
const nameParam: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: absentName },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        '.',
        '..',
        '%2e%2e',
        'a%2Fb',
        'a%2fb',
        'a/b',
        '%2F',
        '%00',
        '%',
        '%zz',
        '%C0%AF',
        '%E2%82',
        'a%20b',
        'a+b',
        'A',
        'UPPER',
        '-a',
        'a-',
        'a.b',
        'a_b',
        '%F0%9F%92%A9',
        'ω',
        '\u00e9',
        'a'.repeat(63),
        'a'.repeat(64),
        'a'.repeat(513),
        'a'.repeat(2_000),
        'a;b',
        'a?b=1',
        'a#frag',
        '/',
        '//',
        'a\\b',
        '$',
        '*',
        '~',
      ),
    },
  )
  .map((name) => (namesExisting(name) ? 'absent-instead' : name));

/** The name part of a cluster URL: every mutating route here must refuse it. */
function clusterUrl(name: string, suffix = ''): string {
  return `/api/v1/clusters/${name}${suffix}`;
}

const queryKeyValue = (keys: string[], values: fc.Arbitrary<string>) =>
  fc.tuple(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...keys) },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    ),
    values,
    fc.boolean(),
  );

/** A query string from keys and values, repeated keys included, encoded or raw. */
const queryOf = (keys: string[], values: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 6,
      arbitrary: fc
        .array(queryKeyValue(keys, values), { minLength: 1, maxLength: 5 })
        .map(
          (pairs) =>
            `?${pairs.map(([k, v, encode]) => (encode ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`)).join('&')}`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?',
        '?&&',
        '?=',
        '?limit',
        '?limit[]=1',
        '?limit[0]=1&limit[1]=2',
        '?a=%zz',
        '?%zz=1',
        '?;limit=1',
      ),
    },
  );

const limitValues = fc.constantFrom(
  '1',
  '100',
  '1000',
  '1001',
  '0',
  '-1',
  '1.5',
  '1e3',
  '1e9',
  '0x10',
  'abc',
  '',
  ' 5',
  'Infinity',
  '99999999999999999999',
);

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
const continueTokens: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.base64String({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => base64url(JSON.stringify(v) ?? '')),
  fc.constantFrom(
    base64url('null'),
    base64url('"x"'),
    base64url('{"after":1,"filters":2}'),
    base64url('{"after":"a"}'),
    base64url('{"after":"a","filters":"wrong-digest-000"}'),
    base64url('{"__proto__":{"after":"a","filters":"x"}}'),
    'not base64 at all!',
    'a'.repeat(1_025),
    'a'.repeat(5_000),
  ),
  fc.constant(null).map(() => issuedToken),
  fc.nat({ max: 40 }).map((cut) => issuedToken.slice(0, cut)),
);
const labelSelectors: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    'region=eu',
    'a in (b',
    'a notin ()',
    '!a,b',
    'x=y,z!=w',
    'a in (b,c),!d',
    '=',
    ',,',
    'a==b',
    'a=b=c',
    '!',
    'example.com/team in (x)',
    `${'a'.repeat(64)}=b`,
    'a'.repeat(5_000),
    `${'a=b,'.repeat(1_000)}a=b`,
  ),
);
const namespaceValues = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('default', 'team-a', 'jobrelay-system', 'A', '-', 'a'.repeat(64), 'ns/..', '%2F'),
  fc.constant(null).map(() => jobNamespace),
);
const booleanValues = fc.constantFrom('true', 'false', 'TRUE', '1', '', 'yes', 'null');

// -- register ---------------------------------------------------------------------------------

function kubeconfigObject(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'fuzz',
        cluster: {
          server: unreachableServer,
          'certificate-authority-data': Buffer.from(sandbox.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'fuzz', user: { token: 'not-a-real-token' } }],
    contexts: [{ name: 'fuzz', context: { cluster: 'fuzz', user: 'fuzz' } }],
    'current-context': 'fuzz',
  };
}

/** Values a kubeconfig field may take: the vetting's refusals, and junk. */
const kubeconfigJunk: fc.Arbitrary<unknown> = fc.oneof(
  junk,
  fc.constantFrom<unknown>(
    'http://127.0.0.1:1',
    '127.0.0.1:1',
    'https://127.0.0.1:1/prefix',
    'ftp://127.0.0.1:1',
    true,
    'not base64 !!',
    { command: '/bin/sh', args: ['-c', 'exit 1'], apiVersion: 'client.authentication.k8s.io/v1' },
    '/etc/passwd',
    'MIIB',
    { 'insecure-skip-tls-verify': true, server: unreachableServer },
    [],
  ),
  fc
    .constantFrom(
      'exec',
      'auth-provider',
      'tokenFile',
      'client-certificate',
      'client-key',
      'username',
      'password',
      'insecure-skip-tls-verify',
      'certificate-authority',
      'client-certificate-data',
      'client-key-data',
      'proxy-url',
    )
    .map((key) => withKey(key, key === 'insecure-skip-tls-verify' ? true : 'value')),
);

const kubeconfigMutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('set', 'set', 'delete', 'extra'),
  value: kubeconfigJunk,
  key: fc.constantFrom(
    'exec',
    'tokenFile',
    'insecure-skip-tls-verify',
    'proxy-url',
    '__proto__',
    'extra',
    'current-context',
  ),
});

/** Points every URL in the text at the unreachable server: no fuzzed kubeconfig may reach a real one. */
function unreachableOnly(text: string): string {
  // http(s) URLs may omit the slashes ("https:host" parses as https://host/); other schemes are
  // caught by their "://". The scheme is bounded so that long letter runs stay linear.
  return text.replace(/(?:https?:|[a-z][a-z0-9+.-]{0,30}:\/\/)[^\s"'\\}\],]*/gi, (url) =>
    /^https?:\/\/127\.0\.0\.1:1(\/|$)/.test(url) ? url : unreachableServer,
  );
}

const kubeconfigText: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 2, arbitrary: fc.constant(null).map(() => yamlStringify(kubeconfigObject())) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.array(kubeconfigMutation, { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([ms, asJson]) => {
          const mutated = ms.reduce(mutate, kubeconfigObject());
          return asJson
            ? toJsonText(mutated)
            : yamlStringify(mutated ?? null, { aliasDuplicateObjects: false });
        }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.nat(), fc.string({ maxLength: 3 })).map(([at, insert]) => {
        const text = yamlStringify(kubeconfigObject());
        const cut = at % text.length;
        return `${text.slice(0, cut)}${insert}${text.slice(cut + 1)}`;
      }),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => yamlStringify(v)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '---',
        'null',
        '[]',
        'clusters: 5\nusers: []',
        'a: &a [*a]',
        `a: &a ["x","x"]\nb: &b [${'*a,'.repeat(50)}*a]\nc: [${'*b,'.repeat(200)}*b]`,
        '!!js/function "function(){}"',
        '%YAML 9.9\n---\na: 1',
        'clusters: []\nusers: []\ncontexts: []\ncurrent-context: x',
        'k'.repeat(600_000),
      ),
    },
  )
  .map(unreachableOnly);

const registerBase = fc.record(
  {
    name: absentName,
    kubeconfig: kubeconfigText,
    labels: fc.constantFrom({ team: 'fuzz' }, { 'example.com/tier': 'gold', gpu: '' }),
    weight: fc.integer({ min: 0, max: 100 }),
    maxActiveWorkloads: fc.integer({ min: 0, max: 1_000_000 }),
    allowedNamespaces: fc.constantFrom(['team-a'], [], ['a', 'b']),
  },
  { requiredKeys: ['name', 'kubeconfig'] },
);
const registerBodies = fc.oneof(
  { weight: 3, arbitrary: registerBase },
  { weight: 5, arbitrary: nearValid(registerBase) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Safety net over the whole request: every URL it carries is the unreachable one, no name exists. */
function registerRequest(payload: Payload, query: string): FuzzRequest {
  let text = payload.payload === undefined ? undefined : unreachableOnly(payload.payload);
  if (text !== undefined) {
    try {
      const body = JSON.parse(text) as { name?: unknown };
      if (typeof body?.name === 'string' && existingClusters.has(body.name))
        text = text.replace(JSON.stringify(body.name), '"absent-instead"');
    } catch {
      // Not JSON: the parser refuses it before any handler.
    }
  }
  return {
    method: 'POST',
    url: `/api/v1/clusters${query}`,
    ...payload,
    ...(text === undefined ? {} : { payload: text }),
  };
}

// -- update -----------------------------------------------------------------------------------

const updateBase = fc.record(
  {
    labels: fc.constantFrom<Record<string, string | null>>(
      { team: 'a' },
      { gone: null },
      { 'example.com/x': 'y', b: null },
    ),
    weight: fc.integer({ min: 0, max: 100 }),
    maxActiveWorkloads: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(null)),
    allowedNamespaces: fc.constantFrom(['team-a'], []),
  },
  { requiredKeys: [] },
);
const updateBodies = fc.oneof(
  { weight: 3, arbitrary: updateBase },
  { weight: 5, arbitrary: nearValid(updateBase) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

// -- preview ----------------------------------------------------------------------------------

const quantityJunk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    '100m',
    '1e400',
    '-1',
    '1Ei',
    '0.0000000001',
    '1E',
    '.5',
    '1.',
    '+1',
    '1e-2000000000',
    '1e2000000000',
    '',
    '9'.repeat(64),
    '9'.repeat(20_000),
    'NaN',
    1e308,
    -1,
    0.1,
    raw('1e400'),
    { cpu: '1' },
    null,
    [],
  ),
  fc.string({ maxLength: 10 }),
);

const previewBase = fc.record({
  apiVersion: fc.constant('batch/v1'),
  kind: fc.constant('Job'),
  metadata: fc.record(
    {
      name: fc.constant('preview'),
      namespace: fc.constantFrom('default', 'team-a'),
      annotations: fc.record(
        {
          'jobrelay.dev/cluster-selector': labelSelectors,
          'jobrelay.dev/placement-policy': fc.constantFrom('spread', 'binpack', 'random', '', 'SPREAD'),
          'jobrelay.dev/cluster': fc.oneof(absentName, fc.constantFrom('', ' ', 'worker-1')),
          'jobrelay.dev/placement': fc.oneof(
            fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? ''),
            fc.constantFrom(
              '{',
              '{"cluster":5}',
              '{"excludedClusters":"x"}',
              '{"cluster":"worker-1","attempt":-1,"placedAt":"yesterday"}',
              '{"attempt":1,"excludedClusters":["a"],"cluster":null}',
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['namespace'] },
  ),
  spec: fc.record({
    parallelism: fc.integer({ min: 0, max: 100_000 }),
    completions: fc.integer({ min: 0, max: 100_000 }),
    template: fc.record({
      spec: fc.record(
        {
          containers: fc.constant([
            {
              name: 'main',
              image: 'x',
              resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { 'nvidia.com/gpu': 1 } },
            },
          ]),
          initContainers: fc.constant([
            { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '1' } } },
          ]),
          overhead: fc.constant({ cpu: '10m' }),
          resources: fc.constant({
            requests: { cpu: '1' },
            limits: { memory: '1Gi', 'hugepages-2Mi': '2Mi' },
          }),
        },
        { requiredKeys: ['containers'] },
      ),
    }),
  }),
});
/** Mutations that land on resource quantities more often than pathsOf alone would. */
const previewMutation: fc.Arbitrary<Mutation> = fc.oneof(
  mutation,
  fc.record({ pick: fc.nat(), op: fc.constant<'set'>('set'), value: quantityJunk, key: fc.constant('cpu') }),
);
/** A Job manifest as the preview takes every kind's: `{manifest: {apiVersion, kind, ...}}`. */
const asJobManifest = (job: object) => ({ manifest: { apiVersion: 'batch/v1', kind: 'Job', ...job } });
const previewBodies: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: previewBase.map(asJobManifest) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(previewBase, fc.array(previewMutation, { minLength: 1, maxLength: 3 }))
      .map(([job, ms]) => ({ manifest: ms.reduce(mutate, asJobManifest(job).manifest) })),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({
        kind: fc.constantFrom('job', 'raycluster'),
        namespace: namespaceValues,
        name: fc.oneof(fc.constant(realJob), fc.string({ maxLength: 12 })),
      }),
      nearValid(fc.constant(null).map(() => ({ kind: 'job', namespace: jobNamespace, name: realJob }))),
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Manifests of every dispatched kind and of kinds that are not, for the kind-generic preview. */
const manifestBase = fc.record({
  manifest: fc.oneof(
    fc.constant(null).map(() => ({
      apiVersion: 'ray.io/v1',
      kind: 'RayCluster',
      spec: sandboxRayClusterSpec({ workerReplicas: 2 }),
    })),
    fc.constant(null).map(() => ({
      apiVersion: 'ray.io/v1',
      kind: 'RayJob',
      spec: { entrypoint: 'python x.py', rayClusterSpec: sandboxRayClusterSpec({ workerReplicas: 1 }) },
    })),
    previewBase.map(({ spec }) => ({ apiVersion: 'batch/v1', kind: 'Job', spec })),
    fc
      .record({
        apiVersion: fc.constantFrom('ray.io/v1alpha1', 'ray.io/v1', '', 'v1', 'x'.repeat(300)),
        kind: fc.constantFrom('RayService', 'raycluster', 'Pod', '', 'RayCluster'),
      })
      .map((gvk) => ({ ...gvk, spec: sandboxRayClusterSpec() })),
  ),
  metadata: fc.record(
    {
      namespace: fc.constantFrom('default', 'team-a'),
      annotations: fc.record(
        {
          'jobrelay.dev/cluster-selector': labelSelectors,
          'jobrelay.dev/cluster': fc.oneof(absentName, fc.constantFrom('', 'worker-1')),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
});

const manifestPreviewBodies: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 2,
    arbitrary: manifestBase.map(({ manifest, metadata }) => ({ manifest: { ...manifest, metadata } })),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(manifestBase, fc.array(previewMutation, { minLength: 1, maxLength: 3 }))
      .map(([{ manifest, metadata }, ms]) => ({ manifest: ms.reduce(mutate, { ...manifest, metadata }) })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.oneof(fc.constantFrom('job', 'raycluster', 'rayjob', 'Job', 'rayservice', ''), fc.string()),
      namespace: namespaceValues,
      name: fc.oneof(fc.constant(realJob), fc.string({ maxLength: 12 })),
    }),
  },
);

// -- reads ------------------------------------------------------------------------------------

/** A path segment for :kind — the dispatched kinds, near misses and junk. */
const kindParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('job', 'raycluster', 'rayjob') },
  { weight: 1, arbitrary: fc.constantFrom('Job', 'jobs', 'rayservice', 'ray.io', 'job,raycluster') },
  { weight: 2, arbitrary: nameParam },
);
/** A `kind` filter value. */
const kindValues = fc.oneof(
  fc.constantFrom('job', 'raycluster', 'rayjob', 'job,raycluster', 'rayjob,job', 'bogus', 'job,bogus', ','),
  fc.constantFrom('JOB', 'job,', ',job', 'job,,rayjob', 'a'.repeat(2000)),
  fc.string({ maxLength: 12 }),
);

const jobNameParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(realJob) },
  { weight: 3, arbitrary: nameParam },
  { weight: 1, arbitrary: fc.constant('a.b-c'.repeat(60)) },
);
const namespaceParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null).map(() => jobNamespace) },
  { weight: 3, arbitrary: nameParam },
);

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  management = clientsFor(sandbox, sandbox.management.name);
  api = await startApiHarness(sandbox, { authCacheSeconds: 10 });
  for (const wc of api.fleet.workerClusters()) existingClusters.add(wc.metadata.name);
  // Mutations are judged by refusals only: they must have real clusters to not name.
  expect(existingClusters.size).toBeGreaterThan(1);
  jobNamespace = await createTestNamespace(management, 'fuzz');
  await management.batch.createNamespacedJob({
    namespace: jobNamespace,
    body: sandboxJob({ name: realJob, managedBy: dispatcherManagedBy }),
  });
  await eventually('the API to see the dispatched Job', async () =>
    api.fleet.workload('job', jobNamespace, realJob) ? true : undefined,
  );
  const page = (await api.call('fleet-admin', 'GET', '/api/v1/clusters?limit=1')).json() as {
    continue?: string;
  };
  issuedToken = page.continue ?? '';
  expect(issuedToken).not.toBe('');
  guard = await startWriteGuard(management);
  // "No events" proves nothing unless the guard sees writes: one Secret made and removed here.
  const probe = { name: 'fuzz-guard-probe', namespace: systemNamespace };
  await management.core.createNamespacedSecret({
    namespace: systemNamespace,
    body: { metadata: { name: probe.name }, stringData: { probe: 'yes' } },
  });
  await management.core.deleteNamespacedSecret(probe);
  await eventually(
    'the write guard to see the probe Secret come and go',
    async () =>
      guard.events.some((e) => e.startsWith(`ADDED Secret/${probe.name}`)) &&
      guard.events.some((e) => e.startsWith(`DELETED Secret/${probe.name}`))
        ? true
        : undefined,
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  guard.events.length = 0;
  guard.initial = await guard.snapshot();
});

afterAll(async () => {
  guard?.stop();
  await api?.close();
  if (jobNamespace) await management.core.deleteNamespace({ name: jobNamespace });
  const lines = [...seen].map(
    ([route, counts]) =>
      `${route}: ${[...counts]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ')}`,
  );
  console.log(
    `[api-fuzz] seed ${SEED} (JOBRELAY_API_FUZZ_SEED for another); answers by route:\n${lines.join('\n')}\nwrite-guard watches resumed after idle timeouts: ${guard?.resumed ?? 0}`,
  );
});

/** How many answers of a route had this status. */
function count(route: string, status: number): number {
  return seen.get(route)?.get(status) ?? 0;
}

describe('inputs the fuzz found (regressions)', () => {
  /** The fake kubeconfig with one top-level list replaced by what the YAML could hold instead. */
  function kubeconfigWith(field: 'contexts' | 'clusters' | 'users', value: unknown): string {
    return yamlStringify({ ...kubeconfigObject(), [field]: value });
  }

  // Was a 500: loadWorkerKubeconfig called contexts.find() on a map, and c.name on null entries.
  it.each([
    ['contexts as a map', kubeconfigWith('contexts', { exec: 'value' })],
    ['a null context', kubeconfigWith('contexts', [null])],
    ['a null cluster', kubeconfigWith('clusters', [null, 'x'])],
    ['a null user', kubeconfigWith('users', [null])],
  ])('a kubeconfig with %s is refused as malformed (422), not a 500', async (_what, kubeconfig) => {
    for (const query of ['', '?dryRun=true']) {
      const request: FuzzRequest = {
        method: 'POST',
        url: `/api/v1/clusters${query}`,
        payload: JSON.stringify({ name: 'fuzz-regression', kubeconfig }),
        contentType: 'application/json',
      };
      const response = await judge('regressions', request, false);
      expect(response.status).toBe(422);
      expect(response.json()).toMatchObject({ code: 'kubeconfig-refused', reason: 'KubeconfigMalformed' });
    }
  });

  // Were fastify's own application/json answers, bypassing the problem format: bad
  // percent-encoding (FST_ERR_BAD_URL, 400) and a segment past maxParamLength (414).
  it.each([
    ['POST', '/api/v1/clusters/%E2%82/cordon'],
    ['POST', '/api/v1/clusters/%/uncordon'],
    ['PATCH', '/api/v1/clusters/%zz'],
    ['DELETE', `/api/v1/clusters/${'a'.repeat(513)}`],
    ['GET', `/api/v1/workloads/job/default/${'a'.repeat(600)}`],
  ] as const)('%s %s is a 400 bad-request problem', async (method, url) => {
    const response = await judge(
      'regressions',
      { method, url, payload: '{}', contentType: 'application/json' },
      false,
    );
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad-request', status: 400 });
  });

  it('wrote nothing', async () => {
    await expectNothingWritten();
  });
});

describe('fuzzed mutations of absent clusters are refused with problems and write nothing', () => {
  it('POST /api/v1/clusters', { timeout: 120_000 }, async () => {
    const route = 'POST /api/v1/clusters';
    await fuzz(
      route,
      payloadOf(registerBodies).map((p) => registerRequest(p, '')),
      MUTATING_RUNS,
      false,
      1,
    );
    // The fuzz got past validation into the kubeconfig probe, and was refused there.
    expect(count(route, 422)).toBeGreaterThan(MUTATING_RUNS / 20);
    expect(count(route, 400)).toBeGreaterThan(MUTATING_RUNS / 20);
    await expectNothingWritten();
  });

  it('POST /api/v1/clusters?dryRun=…', { timeout: 120_000 }, async () => {
    const route = 'POST /api/v1/clusters?dryRun';
    const dryRun = fc.oneof(
      fc.constantFrom(
        '?dryRun=true',
        '?dryRun=false',
        '?dryRun=TRUE',
        '?dryRun=1',
        '?dryRun=',
        '?dryRun=true&dryRun=true',
        '?dryRun[]=true',
        '?dryRun=true&x=1',
      ),
      queryOf(['dryRun'], fc.oneof(booleanValues, fc.string({ maxLength: 8 }))),
    );
    await fuzz(
      route,
      fc.tuple(payloadOf(registerBodies), dryRun).map(([p, q]) => registerRequest(p, q)),
      MUTATING_RUNS,
      false,
      2,
    );
    expect(count(route, 422)).toBeGreaterThan(MUTATING_RUNS / 20);
    await expectNothingWritten();
  });

  it('PATCH /api/v1/clusters/:name', { timeout: 120_000 }, async () => {
    const route = 'PATCH /api/v1/clusters/:name';
    await fuzz(
      route,
      fc
        .tuple(nameParam, payloadOf(updateBodies))
        .map(([name, p]) => ({ method: 'PATCH' as const, url: clusterUrl(name), ...p })),
      MUTATING_RUNS,
      false,
      3,
    );
    // Valid bodies for valid absent names reached the handler, which found no such cluster.
    expect(count(route, 404)).toBeGreaterThan(MUTATING_RUNS / 20);
    await expectNothingWritten();
  });

  for (const [index, action] of (['cordon', 'uncordon', 'drain'] as const).entries()) {
    it(`POST /api/v1/clusters/:name/${action}`, { timeout: 120_000 }, async () => {
      const route = `POST /api/v1/clusters/:name/${action}`;
      const bodies = fc.oneof(fc.constant(undefined), fc.constant({}), fc.jsonValue({ maxDepth: 2 }), junk);
      await fuzz(
        route,
        fc
          .tuple(
            nameParam,
            fc.oneof(fc.constant(''), queryOf(['force', 'dryRun'], booleanValues)),
            payloadOf(bodies),
          )
          .map(([name, query, p]) => ({
            method: 'POST' as const,
            url: clusterUrl(name, `/${action}${query}`),
            ...p,
          })),
        MUTATING_RUNS,
        false,
        4 + index,
      );
      expect(count(route, 404)).toBeGreaterThan(MUTATING_RUNS / 20);
      await expectNothingWritten();
    });
  }

  it('DELETE /api/v1/clusters/:name', { timeout: 120_000 }, async () => {
    const route = 'DELETE /api/v1/clusters/:name';
    const bodies = fc.oneof(fc.jsonValue({ maxDepth: 2 }), junk);
    await fuzz(
      route,
      fc
        .tuple(
          nameParam,
          fc.oneof(
            fc.constantFrom(
              '',
              '?force=true',
              '?force=false',
              '?force=true&force=true',
              '?force=TRUE',
              '?force=1',
              '?force[]=true',
            ),
            queryOf(['force'], booleanValues),
          ),
          fc.oneof(
            { weight: 3, arbitrary: fc.constant<Payload>({}) },
            { weight: 1, arbitrary: payloadOf(bodies) },
          ),
        )
        .map(([name, query, p]) => ({ method: 'DELETE' as const, url: clusterUrl(name, query), ...p })),
      MUTATING_RUNS,
      false,
      7,
    );
    expect(count(route, 404)).toBeGreaterThan(MUTATING_RUNS / 20);
    await expectNothingWritten();
  });

  it('POST /api/v1/placement-preview (a 2xx is allowed: it creates nothing)', {
    timeout: 120_000,
  }, async () => {
    const route = 'POST /api/v1/placement-preview';
    await fuzz(
      route,
      payloadOf(previewBodies).map((p) => ({
        method: 'POST' as const,
        url: '/api/v1/placement-preview',
        ...p,
      })),
      MUTATING_RUNS,
      true,
      8,
    );
    expect(count(route, 200)).toBeGreaterThan(MUTATING_RUNS / 20);
    await expectNothingWritten();
  });
});

describe('the kind-generic preview', () => {
  it('POST /api/v1/placement-preview with manifests of any kind, or a kind and name (a 2xx is allowed: it creates nothing)', {
    timeout: 120_000,
  }, async () => {
    const route = 'POST /api/v1/placement-preview (kinds)';
    await fuzz(
      route,
      payloadOf(manifestPreviewBodies).map((p) => ({
        method: 'POST' as const,
        url: '/api/v1/placement-preview',
        ...p,
      })),
      Math.ceil(MUTATING_RUNS / 2),
      true,
      14,
    );
    // Some manifests were read and placed, some kinds refused as not dispatched.
    expect(count(route, 200)).toBeGreaterThan(MUTATING_RUNS / 40);
    expect(count(route, 422)).toBeGreaterThan(0);
    await expectNothingWritten();
  });
});

describe('fuzzed reads answer 2xx or a problem, never a 5xx', () => {
  it('GET /api/v1/clusters?…', async () => {
    const values = fc.oneof(limitValues, continueTokens, labelSelectors, booleanValues);
    await fuzz(
      'GET /api/v1/clusters',
      queryOf(['limit', 'continue', 'labelSelector', 'active'], values).map((q) => ({
        method: 'GET' as const,
        url: `/api/v1/clusters${q}`,
      })),
      READ_RUNS,
      true,
      9,
    );
  });

  it('GET /api/v1/pending?…', async () => {
    await fuzz(
      'GET /api/v1/pending',
      queryOf(['limit', 'continue', 'namespace'], fc.oneof(limitValues, continueTokens, namespaceValues)).map(
        (q) => ({
          method: 'GET' as const,
          url: `/api/v1/pending${q}`,
        }),
      ),
      READ_RUNS,
      true,
      11,
    );
  });

  it('GET /api/v1/workloads?…', async () => {
    const values = fc.oneof(
      limitValues,
      continueTokens,
      labelSelectors,
      namespaceValues,
      kindValues,
      fc.constantFrom('pending', 'placed', 'running', 'finished', 'suspended', 'succeeded', 'worker-1'),
    );
    await fuzz(
      'GET /api/v1/workloads',
      queryOf(['limit', 'continue', 'labelSelector', 'namespace', 'cluster', 'phase', 'kind'], values).map(
        (q) => ({ method: 'GET' as const, url: `/api/v1/workloads${q}` }),
      ),
      READ_RUNS,
      true,
      15,
    );
  });

  it('GET /api/v1/workloads/:kind/:namespace/:name', async () => {
    const route = 'GET /api/v1/workloads/:kind/:namespace/:name';
    await fuzz(
      route,
      fc.tuple(kindParam, namespaceParam, jobNameParam).map(([kind, ns, name]) => ({
        method: 'GET' as const,
        url: `/api/v1/workloads/${kind}/${ns}/${name}`,
      })),
      READ_RUNS,
      true,
      16,
    );
    // The real Job was found through its kind and described.
    expect(count(route, 200)).toBeGreaterThan(0);
  });

  it('GET /api/v1/workloads/:kind/:namespace/:name/logs?…', async () => {
    const route = 'GET /api/v1/workloads/:kind/:namespace/:name/logs';
    const values = fc.oneof(booleanValues, limitValues, fc.constantFrom('main', 'MAIN', '-1', '0'));
    await fuzz(
      route,
      fc
        .tuple(
          kindParam,
          namespaceParam,
          jobNameParam,
          queryOf(['follow', 'container', 'pod', 'tailLines'], values),
        )
        .map(([kind, ns, name, q]) => ({
          method: 'GET' as const,
          url: `/api/v1/workloads/${kind}/${ns}/${name}/logs${q}`,
        })),
      READ_RUNS,
      true,
      17,
    );
    // The real Job passed validation and was refused as not placed.
    expect(count(route, 409)).toBeGreaterThan(0);
  });

  it('GET /api/v1/pending?… with kinds', async () => {
    await fuzz(
      'GET /api/v1/pending (kinds)',
      queryOf(['namespace', 'kind', 'limit'], fc.oneof(namespaceValues, kindValues, limitValues)).map(
        (q) => ({
          method: 'GET' as const,
          url: `/api/v1/pending${q}`,
        }),
      ),
      Math.ceil(READ_RUNS / 3),
      true,
      18,
    );
  });
});

describe('after the run', () => {
  it('the API still answers, nothing was written, and no prototype was polluted', async () => {
    expect((await api.call('anonymous', 'GET', '/healthz')).status).toBe(200);
    expect((await api.call('fleet-admin', 'GET', '/api/v1/clusters')).status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectNothingWritten();
  });
});
