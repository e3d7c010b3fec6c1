// Rules about how the code is put together, read from the sources themselves, so that a change
// that breaks one fails here rather than in a reviewer's reading:
// - no package imports an app (apps sit on top of packages, never under them);
// - no import cycle between modules (two modules that import each other, or a longer ring, are
//   one module in two files: their order of evaluation decides what each sees);
// - the kind-neutral core names no workload kind: what a batch/v1 Job is lives in
//   packages/kinds/src/batch-job, beside Ray's.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every source file of the product (not tests, not scripts): what ships. */
const sourceDirs = ['apps/*/src', 'apps/dashboard/browser', 'packages/*/src'];

function expand(pattern: string): string[] {
  const [head, star, ...rest] = pattern.split('/');
  if (star !== '*') return [join(root, pattern)];
  return readdirSync(join(root, head!))
    .map((name) => join(root, head!, name, ...rest))
    .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory());
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = [...new Set(sourceDirs.flatMap(expand).flatMap(tsFiles))].sort();

/** Workspace name (`@jobrelay/kinds`) to its folder (`packages/kinds`). */
const workspaces = new Map(
  [...expand('apps/*'), ...expand('packages/*')].flatMap((dir) => {
    const manifest = join(dir, 'package.json');
    if (!statSync(manifest, { throwIfNoEntry: false })) return [];
    const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string };
    return [[name, relative(root, dir)] as const];
  }),
);

// Static imports and re-exports (`import ... from '...'`, `export ... from '...'`, `import '...'`)
// and dynamic `import('...')`; type-only imports count too: a type cycle is still a cycle of
// meaning, and a package importing an app's types depends on the app.
const importPattern =
  /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function specifiersOf(text: string): string[] {
  return [...text.matchAll(importPattern)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/** The repository-relative file an import names, when it is one of ours; undefined otherwise. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) return relative(root, resolve(dirname(from), specifier));
  const [scope, name, ...subpath] = specifier.split('/');
  const folder = workspaces.get(`${scope}/${name}`);
  if (!folder) return undefined;
  return subpath.length > 0 ? join(folder, ...subpath) : join(folder, 'src/index.ts');
}

const graph = new Map(
  files.map((file) => {
    const text = readFileSync(file, 'utf8');
    const targets = specifiersOf(text)
      .map((specifier) => ({ specifier, target: resolveImport(file, specifier) }))
      .filter((edge): edge is { specifier: string; target: string } => edge.target !== undefined);
    return [relative(root, file), targets] as const;
  }),
);

/** Strongly connected components of more than one module (Tarjan's algorithm). */
function importCycles(): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const { target } of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Source without comments (line and block), so prose about a kind is not taken for code. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('how the code is put together', () => {
  it('reads the sources it checks', () => {
    // Guards the checks below against passing on an empty tree (a moved folder, a bad glob).
    expect(files.length).toBeGreaterThan(100);
    expect(workspaces.get('@jobrelay/kinds')).toBe('packages/kinds');
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
  });

  it('no package imports an app', () => {
    const apps = new Set([...workspaces.values()].filter((folder) => folder.startsWith('apps/')));
    const offending = [...graph]
      .filter(([file]) => file.startsWith('packages/'))
      .flatMap(([file, edges]) =>
        edges
          .filter(({ target }) => [...apps].some((app) => target.startsWith(`${app}/`)))
          .map(({ specifier }) => `${file} imports ${specifier}`),
      );
    expect(offending).toEqual([]);
  });

  it('no modules import each other, directly or around a ring', () => {
    expect(importCycles()).toEqual([]);
  });

  it('the core names no workload kind: Job facts live in packages/kinds/src/batch-job', () => {
    const kindSpecific = /\bV1Job\w*|\bbatch\/v1\b|'job'|"job"/;
    // The sandbox and the benchmark build fleets and submit Jobs on purpose: harnesses, not core.
    const harnesses = ['packages/kinds/src/batch-job/', 'packages/sandbox/', 'packages/bench/'];
    const core = [...graph.keys()].filter((file) => !harnesses.some((folder) => file.startsWith(folder)));
    // The one place a kind is named on purpose: the plugin's `jobs` command is, by design,
    // shorthand for `workloads --kind job`; it decides nothing else.
    const namedOnPurpose = new Set([
      "apps/kubectl-jobrelay/src/workload-commands.ts: return listCommand(s, { command: 'jobs', kind: 'job', noun: 'Jobs' });",
    ]);
    const offending = core.flatMap((file) =>
      withoutComments(readFileSync(join(root, file), 'utf8'))
        .split('\n')
        .flatMap((line, i) =>
          kindSpecific.test(line) && !namedOnPurpose.has(`${file}: ${line.trim()}`)
            ? [`${file}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(offending).toEqual([]);
  });
});
