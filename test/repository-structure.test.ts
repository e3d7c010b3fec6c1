// Rules about how the code is put together, read from the sources themselves, so that a change
// that breaks one fails here rather than in a reviewer's reading:
// - every workspace declares in its package.json each package its files import (what is not
//   declared resolves only by luck of hoisting, and a workspace installed or bundled alone breaks);
// - no relative import leaves its workspace (`../../packages/x/src/y.ts` uses a package without
//   declaring it and without its "exports", where neither the manifest nor a reader sees it);
// - no package imports an app (apps sit on top of packages, never under them);
// - no app imports another app (each is a process of its own: what two need goes in a package);
// - only the placement queue loads BullMQ or ioredis: every package's main entry is free of them;
// - the bottom package, @jobrelay/resources (quantities, pod requests, label selectors: Kubernetes'
//   rules, not jobrelay's), depends on no other jobrelay workspace, so any of them may import it;
// - no import cycle between modules (two modules that import each other, or a longer ring, are
//   one module in two files: their order of evaluation decides what each sees);
// - the kind-neutral core names no workload kind: what a batch/v1 Job is lives in
//   packages/kinds/src/batch-job, beside Ray's;
// - no file of product code is over 600 lines unless its opening comment says why ("over 600
//   lines" and the reason): a longer file is usually two modules that grew into one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every source file of the product (not tests, not scripts): what ships. */
const sourceDirs = ['apps/*/src', 'packages/dashboard/browser', 'packages/*/src'];

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

interface Manifest {
  name: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports?: Record<string, string>;
}

function manifestIn(dir: string): Manifest | undefined {
  const path = join(dir, 'package.json');
  if (!statSync(path, { throwIfNoEntry: false })) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

const rootManifest = manifestIn(root)!;

/** Each workspace's folder (`packages/kinds`, `e2e`) to its manifest, as npm finds them. */
const manifests = new Map(
  (rootManifest.workspaces ?? []).flatMap(expand).flatMap((dir) => {
    const manifest = manifestIn(dir);
    return manifest ? [[relative(root, dir), manifest] as const] : [];
  }),
);

/** Workspace name (`@jobrelay/kinds`) to its folder (`packages/kinds`). */
const workspaces = new Map([...manifests].map(([folder, { name }]) => [name, folder] as const));

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
  // As Node resolves it: through the package's "exports" (`@jobrelay/placement/queue`).
  const exported = manifests.get(folder)?.exports?.[subpath.length > 0 ? `./${subpath.join('/')}` : '.'];
  if (exported) return join(folder, exported);
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

/** Every .ts file of every workspace (sources, tests, harnesses, binaries), with what it imports. */
const workspaceFiles = [...manifests.keys()].flatMap((folder) =>
  tsFiles(join(root, folder)).map((path) => ({
    folder,
    file: relative(root, path),
    specifiers: [...new Set(specifiersOf(readFileSync(path, 'utf8')))],
  })),
);

/**
 * The package a bare specifier names (`@scope/name/sub` is `@scope/name`, `name/sub` is `name`);
 * undefined for a relative path or a Node builtin, which no manifest declares.
 */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || isBuiltin(specifier)) return undefined;
  const [first, second] = specifier.split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first;
}

function declaredBy(manifest: Manifest): Set<string> {
  const { dependencies, devDependencies, peerDependencies } = manifest;
  return new Set([
    manifest.name,
    ...Object.keys({ ...dependencies, ...devDependencies, ...peerDependencies }),
  ]);
}

/** Test code, run by the root's vitest and shipped by no one: under test/, middle/ or unit/, or a *.test.ts. */
function isTestFile(folder: string, file: string): boolean {
  return /(^|\/)(test|middle|unit)\//.test(relative(folder, file)) || file.endsWith('.test.ts');
}

/** How `folder` should declare a package: with the range the repository already gives it. */
function declaration(pkg: string, folder: string): string {
  // Our own workspaces are declared as "*"; an outside package, with a range that pins a version.
  if (workspaces.has(pkg)) return `"${pkg}": "*"`;
  const range = [rootManifest, ...manifests.values()]
    .flatMap(({ dependencies, devDependencies, peerDependencies }) =>
      [dependencies, devDependencies, peerDependencies].map((declared) => declared?.[pkg]),
    )
    .find((declared) => declared !== undefined && declared !== '*');
  return range ? `"${pkg}": "${range}"` : `"${pkg}" (npm install ${pkg} --workspace ${folder})`;
}

describe('how the code is put together', () => {
  it('reads the sources it checks', () => {
    // Guards the checks below against passing on an empty tree (a moved folder, a bad glob).
    expect(files.length).toBeGreaterThan(100);
    expect(workspaces.get('@jobrelay/kinds')).toBe('packages/kinds');
    expect(workspaces.get('@jobrelay/e2e')).toBe('e2e');
    expect(workspaceFiles.length).toBeGreaterThan(files.length);
    expect(workspaceFiles.some(({ file }) => file.startsWith('e2e/src/'))).toBe(true);
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

  it('every workspace declares each package its files import', () => {
    // The root's devDependencies (vitest, typescript, @types/node, biome) are the tools every
    // workspace's tests share: vitest runs each project from the root (vitest.config.ts) and finds
    // them in the root's node_modules. So a test file (under test/, middle/ or unit/, or a
    // *.test.ts) may import them undeclared; no other file may: a helper a test harness loads
    // (e2e/src) is code of its workspace like any other, and declares vitest itself.
    const rootTools = new Set(Object.keys(rootManifest.devDependencies ?? {}));
    const offending = workspaceFiles.flatMap(({ folder, file, specifiers }) => {
      const declared = declaredBy(manifests.get(folder)!);
      const testFile = isTestFile(folder, file);
      return specifiers.flatMap((specifier) => {
        const pkg = packageOf(specifier);
        if (pkg === undefined || declared.has(pkg) || (testFile && rootTools.has(pkg))) return [];
        const section = testFile
          ? 'devDependencies'
          : 'dependencies (devDependencies if only its tests load this file)';
        return [
          `${file} imports '${specifier}': add ${declaration(pkg, folder)} to ${folder}/package.json ${section}`,
        ];
      });
    });
    expect(offending).toEqual([]);
  });

  it('no relative import leaves its workspace', () => {
    // Files in no workspace (the root's test/ and scripts/, vitest.config.ts) are not checked: they
    // belong to no package, and read the repository as a whole.
    const offending = workspaceFiles.flatMap(({ folder, file, specifiers }) =>
      specifiers
        .filter((specifier) => specifier.startsWith('.'))
        .flatMap((specifier) => {
          const target = relative(root, resolve(root, dirname(file), specifier));
          if (target.startsWith(`${folder}/`)) return [];
          const owner = [...manifests].find(([other]) => target.startsWith(`${other}/`));
          if (owner === undefined) {
            return [`${file} imports '${specifier}' (${target}, in no workspace): move it into ${folder}`];
          }
          const [ownerFolder, { name }] = owner;
          const declare = declaredBy(manifests.get(folder)!).has(name)
            ? ''
            : `, and add ${declaration(name, folder)} to ${folder}/package.json`;
          const fix = `import it as ${name}/<subpath>, listed in ${ownerFolder}/package.json "exports"${declare}`;
          return [`${file} imports '${specifier}' (${target}, outside ${folder}): ${fix}`];
        }),
    );
    expect(offending).toEqual([]);
  });

  it('no app imports another app', () => {
    const apps = new Map([...workspaces].filter(([, folder]) => folder.startsWith('apps/')));
    // Only apps are checked: e2e tests the apps, so it imports them; packages are checked above.
    const offending = workspaceFiles
      .filter(({ folder }) => folder.startsWith('apps/'))
      .flatMap(({ folder, file, specifiers }) =>
        specifiers.flatMap((specifier) => {
          const pkg = packageOf(specifier);
          const app = pkg === undefined ? undefined : apps.get(pkg);
          if (app === undefined || app === folder) return [];
          return [
            `${file} imports '${specifier}' (the app ${app}): move what both apps need into a package under packages/ and import that`,
          ];
        }),
      );
    expect(offending).toEqual([]);
  });

  it('only the placement queue loads BullMQ or ioredis: every package entry but the queue is free of them', () => {
    // The pure packages (admission, planner, kinds, ...) import @jobrelay/placement for its
    // functions; had its entry exported the queue, each would load BullMQ and ioredis with it.
    // So: follow every package's main entry through every module it loads, and find no Redis
    // client. The queue is @jobrelay/placement/queue; the sandbox and the benchmark run Redis.
    const redisClients = new Set(['bullmq', 'ioredis']);
    const allowedToLoadRedis = new Set(['packages/sandbox', 'packages/bench']);
    const specifiersByFile = new Map(
      files.map((file) => [relative(root, file), specifiersOf(readFileSync(file, 'utf8'))] as const),
    );
    const offending = [...manifests]
      .filter(([folder]) => folder.startsWith('packages/') && !allowedToLoadRedis.has(folder))
      .flatMap(([folder]) => {
        const entry = join(folder, 'src/index.ts');
        const seen = new Set<string>();
        const path = new Map<string, string>([[entry, entry]]);
        const stack = [entry];
        const found: string[] = [];
        while (stack.length > 0) {
          const file = stack.pop()!;
          if (seen.has(file)) continue;
          seen.add(file);
          for (const specifier of specifiersByFile.get(file) ?? [])
            if (redisClients.has(specifier))
              found.push(
                `${folder}'s entry loads '${specifier}' through ${path.get(file)}: import the queue or the connection from @jobrelay/placement/queue, and only where a process runs it`,
              );
          for (const { target } of graph.get(file) ?? []) {
            if (!path.has(target)) path.set(target, `${path.get(file)} -> ${target}`);
            stack.push(target);
          }
        }
        return found;
      });
    expect(offending).toEqual([]);
    // The check follows real edges: the queue's own entry does load them.
    expect(specifiersByFile.get('packages/placement/src/placement-queue.ts')).toContain('bullmq');
  });

  it('the bottom package, @jobrelay/resources, depends on no other jobrelay workspace', () => {
    const folder = workspaces.get('@jobrelay/resources')!;
    const manifest = manifests.get(folder)!;
    const declared = Object.keys({
      ...manifest.dependencies,
      ...manifest.devDependencies,
      ...manifest.peerDependencies,
    }).filter((pkg) => workspaces.has(pkg));
    const imported = workspaceFiles
      .filter((entry) => entry.folder === folder)
      .flatMap(({ file, specifiers }) =>
        specifiers
          .filter((specifier) => {
            const pkg = packageOf(specifier);
            return pkg !== undefined && pkg !== manifest.name && workspaces.has(pkg);
          })
          .map((specifier) => `${file} imports '${specifier}'`),
      );
    expect(folder).toBe('packages/resources');
    expect(declared, `${folder}/package.json declares`).toEqual([]);
    expect(imported).toEqual([]);
  });

  it('no modules import each other, directly or around a ring', () => {
    expect(importCycles()).toEqual([]);
  });

  it('no file of product code is over 600 lines without the reason in its opening comment', () => {
    const lineLimit = 600;
    // The sandbox and the benchmark are harnesses that build fleets and run scenarios: not shipped.
    const harnesses = ['packages/sandbox/', 'packages/bench/'];
    const long = [...graph.keys()]
      .filter((file) => !harnesses.some((folder) => file.startsWith(folder)))
      .flatMap((file) => {
        const lines = readFileSync(join(root, file), 'utf8').split('\n');
        if (lines.length <= lineLimit) return [];
        // The opening comment: the comment lines among the first 40 (some files open with imports).
        const opening = lines
          .slice(0, 40)
          .filter((line) => line.trimStart().startsWith('//'))
          .join(' ');
        return /over 600 lines\S*\s+\S/i.test(opening) ? [] : [`${file}: ${lines.length} lines`];
      });
    expect(long).toEqual([]);
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
