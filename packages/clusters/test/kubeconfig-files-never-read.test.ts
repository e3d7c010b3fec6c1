import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

// No kubeconfig makes jobrelay read a file or run a program: every field that names one is
// refused before anything is opened, on the current context's entries and on the others.
// Each file field points at a file whose content is a marker (which must appear nowhere), at a
// FIFO (opening it would block until a writer comes: none does) and at /dev/zero (reading it
// never ends). The loads run in a child process with a deadline, so a read that blocks fails
// the test instead of hanging it.

const dir = mkdtempSync(join(tmpdir(), 'jobrelay-never-read-'));
const MARKER = `jobrelay-marker-${process.pid}-${Date.now()}`;
const markerFile = join(dir, 'marker');
writeFileSync(markerFile, MARKER);
const fifo = join(dir, 'fifo');
execFileSync('mkfifo', [fifo]);
const ranMarker = join(dir, 'exec-ran');
const targets = { marker: markerFile, fifo, 'dev-zero': '/dev/zero' };
// The loading child is done by then: spawnSync waits for it (and kills it at its deadline).
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CA_DATA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString(
  'base64',
);

function kubeconfig(
  change: (doc: {
    clusters: Array<{ cluster: Record<string, unknown> }>;
    users: Array<{ user: Record<string, unknown> }>;
  }) => void,
): string {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'worker-1', cluster: { server: 'https://127.0.0.1:1', 'certificate-authority-data': CA_DATA } },
      { name: 'spare', cluster: { server: 'https://127.0.0.1:2', 'certificate-authority-data': CA_DATA } },
    ],
    users: [
      { name: 'jobrelay', user: { token: 'current-token' } },
      { name: 'spare', user: { token: 'spare-token' } },
    ],
    contexts: [
      { name: 'current', context: { cluster: 'worker-1', user: 'jobrelay' } },
      { name: 'spare', context: { cluster: 'spare', user: 'spare' } },
    ],
    'current-context': 'current',
  };
  change(doc);
  return stringify(doc);
}

interface FileCase {
  name: string;
  text: string;
  path: string;
}

const fileFields = [
  { entry: 'user', field: 'token-file' },
  { entry: 'user', field: 'tokenFile' },
  { entry: 'user', field: 'client-certificate' },
  { entry: 'user', field: 'client-key' },
  { entry: 'cluster', field: 'certificate-authority' },
] as const;

const fileCases: FileCase[] = fileFields.flatMap(({ entry, field }) =>
  [0, 1].flatMap((index) =>
    Object.entries(targets).map(([target, file]) => ({
      name: `${field} on ${index === 0 ? 'the current' : 'an unused'} ${entry} → ${target}`,
      path: `${entry}s[${index}].${entry}.${field}`,
      text: kubeconfig((doc) => {
        if (entry === 'user') doc.users[index]!.user[field] = file;
        else doc.clusters[index]!.cluster[field] = file;
      }),
    })),
  ),
);

const otherCases: FileCase[] = [
  {
    name: 'an auth-provider whose config names a token file (client-node reads it per request)',
    path: 'users[0].user.auth-provider',
    text: kubeconfig((doc) => {
      doc.users[0]!.user = { 'auth-provider': { name: 'file', config: { tokenFile: markerFile } } };
    }),
  },
  {
    name: 'an exec plugin that would leave a file behind if it ran',
    path: 'users[1].user.exec',
    text: kubeconfig((doc) => {
      doc.users[1]!.user = {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: '/bin/sh',
          args: ['-c', `cat ${markerFile} > ${ranMarker}`],
        },
      };
    }),
  },
];

/** Loads each text in a child process (as the controller would), then uses an accepted one as a connection would. */
function loadInChild(texts: string[]): { results: Array<Record<string, unknown>>; output: string } {
  const loader = new URL('../src/load-worker-kubeconfig.ts', import.meta.url).href;
  const script = `
    import { readFileSync } from 'node:fs';
    import { loadWorkerKubeconfig } from ${JSON.stringify(loader)};
    const results = [];
    for (const [index, text] of JSON.parse(readFileSync(0, 'utf8')).entries()) {
      process.stderr.write('loading case ' + index + '\\n');
      const loaded = loadWorkerKubeconfig(text);
      if (loaded.ok) {
        const options = {};
        await loaded.kubeConfig.applyToHTTPSOptions(options);
        results.push({ ok: true, exported: loaded.kubeConfig.exportConfig(), headers: options.headers });
      } else results.push(loaded);
    }
    process.stdout.write(JSON.stringify(results));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    input: JSON.stringify(texts),
    encoding: 'utf8',
    timeout: 30_000,
  });
  const output = `${child.stdout}${child.stderr}`;
  expect(
    child.signal,
    `the loads did not finish (a file was opened?): ${child.stderr.split('\n').at(-2)}`,
  ).toBeNull();
  expect(child.status, child.stderr).toBe(0);
  return { results: JSON.parse(child.stdout) as Array<Record<string, unknown>>, output };
}

describe('a kubeconfig naming files or programs', () => {
  it('is refused naming the field, without opening the file or running the program', {
    timeout: 60_000,
  }, () => {
    const cases = [...fileCases, ...otherCases];
    expect(cases.length).toBe(32);
    const control = kubeconfig(() => {});
    const { results, output } = loadInChild([...cases.map((c) => c.text), control]);
    for (const [index, testCase] of cases.entries()) {
      expect(results[index], testCase.name).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe' });
      expect(results[index]!.message, testCase.name).toContain(`${testCase.path} is not allowed: `);
    }
    // The harness itself works: a clean kubeconfig loads and sets its token.
    expect(results.at(-1)).toMatchObject({ ok: true, headers: { Authorization: 'Bearer current-token' } });
    expect(output).not.toContain(MARKER);
    expect(existsSync(ranMarker)).toBe(false);
  });
});
