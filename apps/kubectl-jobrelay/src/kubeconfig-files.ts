import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import { OperationError, UnreachableError } from './plugin-errors.ts';

type Fields = Record<string, unknown>;

/** One named entry of a kubeconfig list, e.g. `{ name, cluster: {...} }`. */
export interface NamedEntry {
  name: string;
  fields: Fields;
}

/**
 * Kubeconfig files merged the way kubectl merges them, every relative file path already made
 * absolute against the directory of the file that held it (kubectl resolves them that way).
 */
export interface MergedKubeconfig {
  clusters: NamedEntry[];
  users: NamedEntry[];
  contexts: NamedEntry[];
  currentContext: string | undefined;
  /** The files read, for messages. */
  files: string[];
}

export type Env = Record<string, string | undefined>;

/**
 * Which files make up the kubeconfig, with kubectl's precedence: `--kubeconfig`, else every file
 * of $KUBECONFIG, else ~/.kube/config.
 */
export function kubeconfigFiles(flag: string | undefined, env: Env): { files: string[]; explicit: boolean } {
  if (flag) return { files: [flag], explicit: true };
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f.length > 0);
  if (list.length > 0) return { files: list, explicit: false };
  const home = env.HOME ?? env.USERPROFILE;
  return { files: home ? [join(home, '.kube', 'config')] : [], explicit: false };
}

/**
 * Reads and merges kubeconfig files. As in kubectl, the first file that names a cluster, user or
 * context wins, and so does the first current-context; files of $KUBECONFIG that do not exist are
 * skipped, but a file given with --kubeconfig must exist.
 */
export function loadKubeconfig(files: readonly string[], explicit: boolean): MergedKubeconfig {
  const merged: MergedKubeconfig = {
    clusters: [],
    users: [],
    contexts: [],
    currentContext: undefined,
    files: [],
  };
  for (const file of files) {
    if (!existsSync(file)) {
      if (explicit) throw new UnreachableError(`the kubeconfig ${file} does not exist`);
      continue;
    }
    let raw: Fields;
    try {
      raw = (parse(readFileSync(file, 'utf8')) ?? {}) as Fields;
    } catch (err) {
      throw new UnreachableError(
        `the kubeconfig ${file} could not be read: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    merged.files.push(file);
    const base = dirname(resolve(file));
    addEntries(merged.clusters, raw.clusters, 'cluster', (c) => resolveClusterPaths(c, base));
    addEntries(merged.users, raw.users, 'user', (u) => resolveUserPaths(u, base));
    addEntries(merged.contexts, raw.contexts, 'context', (c) => c);
    const current = raw['current-context'];
    if (!merged.currentContext && typeof current === 'string' && current.length > 0)
      merged.currentContext = current;
  }
  return merged;
}

function addEntries(
  into: NamedEntry[],
  list: unknown,
  key: string,
  resolvePaths: (f: Fields) => Fields,
): void {
  if (!Array.isArray(list)) return;
  for (const item of list as Fields[]) {
    const name = item?.name;
    if (typeof name !== 'string' || into.some((e) => e.name === name)) continue;
    const fields = item[key];
    into.push({
      name,
      fields: resolvePaths(fields && typeof fields === 'object' ? { ...(fields as Fields) } : {}),
    });
  }
}

function absolute(base: string, path: unknown): unknown {
  return typeof path === 'string' && path.length > 0 && !isAbsolute(path) ? join(base, path) : path;
}

function resolveClusterPaths(cluster: Fields, base: string): Fields {
  if (cluster['certificate-authority'] !== undefined)
    cluster['certificate-authority'] = absolute(base, cluster['certificate-authority']);
  return cluster;
}

function resolveUserPaths(user: Fields, base: string): Fields {
  for (const field of ['client-certificate', 'client-key', 'tokenFile']) {
    if (user[field] !== undefined) user[field] = absolute(base, user[field]);
  }
  const exec = user.exec as Fields | undefined;
  // kubectl resolves an exec command only when it is a path (has a separator), not a PATH lookup.
  if (exec && typeof exec.command === 'string' && exec.command.includes(sep)) {
    user.exec = { ...exec, command: absolute(base, exec.command) };
  }
  return user;
}

export interface ResolvedContext {
  contextName: string;
  context: Fields;
  cluster: NamedEntry;
  /** Absent when the context names no user (anonymous). */
  user: NamedEntry | undefined;
  namespace: string | undefined;
}

/**
 * The named context (else the current one) with its cluster and user. `makeError` decides the
 * exit code: a missing context of the caller's own credentials means "no credentials" (3), a
 * missing --from-context of `register` is a failed operation (1).
 */
export function resolveContext(
  config: MergedKubeconfig,
  name: string | undefined,
  makeError: (message: string) => Error = (m) => new UnreachableError(m),
): ResolvedContext {
  const where = config.files.length > 0 ? config.files.join(delimiter) : 'no kubeconfig file found';
  const contextName = name ?? config.currentContext;
  if (!contextName) {
    throw makeError(
      config.files.length === 0
        ? 'no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config'
        : `the kubeconfig (${where}) has no current-context; pass --context`,
    );
  }
  const context = config.contexts.find((c) => c.name === contextName);
  if (!context) throw makeError(`context "${contextName}" not found in ${where}`);
  const clusterName = context.fields.cluster;
  const cluster = config.clusters.find((c) => c.name === clusterName);
  if (!cluster)
    throw makeError(
      `context "${contextName}" names cluster "${String(clusterName)}", which is not in ${where}`,
    );
  const userName = context.fields.user;
  const user =
    typeof userName === 'string' && userName ? config.users.find((u) => u.name === userName) : undefined;
  if (typeof userName === 'string' && userName && !user) {
    throw makeError(`context "${contextName}" names user "${userName}", which is not in ${where}`);
  }
  const namespace = typeof context.fields.namespace === 'string' ? context.fields.namespace : undefined;
  return { contextName, context: context.fields, cluster, user, namespace };
}

function readInline(path: string, what: string, readFile: (p: string) => Buffer): Buffer {
  try {
    return readFile(path);
  } catch (err) {
    throw new OperationError(
      `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/**
 * A user entry with its files inlined: client-certificate/-key become *-data and tokenFile
 * becomes token (trimmed, as client-go trims it). A token given inline wins over tokenFile.
 */
export function inlineUser(user: Fields, readFile: (p: string) => Buffer = readFileSync): Fields {
  const out: Fields = { ...user };
  const pairs = [
    ['client-certificate', 'client-certificate-data'],
    ['client-key', 'client-key-data'],
  ] as const;
  for (const [pathField, dataField] of pairs) {
    const path = out[pathField];
    delete out[pathField];
    if (typeof path === 'string' && path && out[dataField] === undefined) {
      out[dataField] = readInline(path, pathField, readFile).toString('base64');
    }
  }
  const tokenFile = out.tokenFile;
  delete out.tokenFile;
  if (typeof tokenFile === 'string' && tokenFile && out.token === undefined) {
    out.token = readInline(tokenFile, 'tokenFile', readFile).toString('utf8').trim();
  }
  return out;
}

/** A cluster entry with certificate-authority inlined as certificate-authority-data. */
export function inlineCluster(cluster: Fields, readFile: (p: string) => Buffer = readFileSync): Fields {
  const out: Fields = { ...cluster };
  const path = out['certificate-authority'];
  delete out['certificate-authority'];
  // Extensions carry tool-specific data (e.g. minikube's) that no client reads, and
  // disable-compression only how this machine's kubectl talks: neither is the worker's business.
  delete out.extensions;
  delete out['disable-compression'];
  if (typeof path === 'string' && path && out['certificate-authority-data'] === undefined) {
    out['certificate-authority-data'] = readInline(path, 'certificate-authority', readFile).toString(
      'base64',
    );
  }
  return out;
}

/**
 * A minimal self-contained kubeconfig of one context: just its cluster, user and context, every
 * file reference replaced by inline data, because the API refuses file paths (they would name
 * files on the controller's filesystem, not the admin's). Anything else outside the API's
 * allow-list (exec, auth-provider, impersonation, proxy-url) is sent as it is: the API names
 * the field it refuses, or accepts it when its admin allowed it.
 */
export function extractContextKubeconfig(
  config: MergedKubeconfig,
  contextName: string,
  readFile: (p: string) => Buffer = readFileSync,
): Fields {
  const resolved = resolveContext(config, contextName, (m) => new OperationError(m));
  const context: Fields = { cluster: resolved.cluster.name };
  if (resolved.user) context.user = resolved.user.name;
  if (resolved.namespace) context.namespace = resolved.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: resolved.cluster.name, cluster: inlineCluster(resolved.cluster.fields, readFile) }],
    users: resolved.user
      ? [{ name: resolved.user.name, user: inlineUser(resolved.user.fields, readFile) }]
      : [],
    contexts: [{ name: resolved.contextName, context }],
    'current-context': resolved.contextName,
  };
}
