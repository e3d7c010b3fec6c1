// The middle test tier's apiserver: an HTTPS server in this process that answers the requests
// @kubernetes/client-node (and jobrelay's undici watch) send, for the few collections a test
// registers: discovery, list, watch (newline-delimited events, kept open), get, merge patch
// (status too), SelfSubjectAccessReview (allowed unless denied), /version. Enough for the
// WorkerClusterRegistry's real code path (Secret read, kubeconfig, TLS, probe, watches, status
// writes) to run in seconds without Kubernetes. It can drop every connection and stop
// answering (a lost cluster) and listen again on the same port (its return).
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { applyMergePatch } from '@jobrelay/mirror';

interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string; generation?: number };
  [field: string]: unknown;
}

interface Collection {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** By namespace/name (or name). */
  objects: Map<string, StoredObject>;
}

function groupPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export class InProcessApiServer {
  /** `METHOD path` of every request, in order (query strings dropped). */
  readonly requests: string[] = [];
  /** SelfSubjectAccessReviews answered not allowed: `verb resource` (e.g. `list jobs`). */
  readonly denied = new Set<string>();
  /** Requests (`METHOD path`) held unanswered until release(): a busy apiserver. */
  private held: { matches: (request: string) => boolean; gate: Promise<void> } | undefined;
  private readonly collections = new Map<string, Collection>();
  private readonly watchers = new Map<string, Set<ServerResponse>>();
  /** Every event per collection, so a watch from a resourceVersion gets what came after it. */
  private readonly history = new Map<string, { version: number; line: string }[]>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private version = 1000;
  private uids = 0;
  port = 0;
  private readonly tls: { cert: Buffer; key: Buffer };

  constructor(pki: { servingCert: string; servingKey: string }) {
    this.tls = { cert: readFileSync(pki.servingCert), key: readFileSync(pki.servingKey) };
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Serves objects of this kind (`v1` `Secret` `secrets`, namespaced). */
  serve(apiVersion: string, kind: string, plural: string, namespaced: boolean): this {
    this.collections.set(`${apiVersion}/${plural}`, {
      apiVersion,
      kind,
      plural,
      namespaced,
      objects: new Map(),
    });
    return this;
  }

  /** Creates or replaces an object (a new resourceVersion; a generation bump when its spec changed). */
  put(
    apiVersion: string,
    plural: string,
    object: { metadata: StoredObject['metadata']; [field: string]: unknown },
  ): StoredObject {
    const collection = this.collection(apiVersion, plural);
    const key = this.keyOf(object.metadata);
    const previous = collection.objects.get(key);
    const stored: StoredObject = structuredClone({
      ...object,
      apiVersion,
      kind: collection.kind,
    }) as StoredObject;
    const specChanged = JSON.stringify(previous?.spec) !== JSON.stringify(stored.spec);
    stored.metadata = {
      ...stored.metadata,
      uid: previous?.metadata.uid ?? stored.metadata.uid ?? `uid-${++this.uids}`,
      resourceVersion: String(++this.version),
      generation: (previous?.metadata.generation ?? 0) + (previous && !specChanged ? 0 : 1),
    };
    collection.objects.set(key, stored);
    this.notify(collection, previous ? 'MODIFIED' : 'ADDED', stored);
    return structuredClone(stored);
  }

  get(apiVersion: string, plural: string, name: string, namespace?: string): StoredObject | undefined {
    const found = this.collection(apiVersion, plural).objects.get(this.keyOf({ name, namespace }));
    return found ? structuredClone(found) : undefined;
  }

  remove(apiVersion: string, plural: string, name: string, namespace?: string): void {
    const collection = this.collection(apiVersion, plural);
    const key = this.keyOf({ name, namespace });
    const found = collection.objects.get(key);
    if (!found) return;
    collection.objects.delete(key);
    this.notify(collection, 'DELETED', {
      ...found,
      metadata: { ...found.metadata, resourceVersion: String(++this.version) },
    });
  }

  /**
   * Holds every request whose `METHOD path` passes `matches` (counted in `requests` on arrival)
   * until the returned release is called, as an apiserver that takes long to answer.
   */
  hold(matches: (request: string) => boolean): () => void {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.held = { matches, gate };
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** Listens (again, on the same port once it had one). */
  async listen(): Promise<void> {
    const server = createServer({ ...this.tls }, (req, res) => {
      void this.handle(req, res);
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every connection and stops answering: the cluster is lost. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const watchers of this.watchers.values()) for (const res of watchers) res.destroy();
    this.watchers.clear();
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private collection(apiVersion: string, plural: string): Collection {
    const found = this.collections.get(`${apiVersion}/${plural}`);
    if (!found) throw new Error(`${apiVersion} ${plural} is not served`);
    return found;
  }

  private keyOf(metadata: { name: string; namespace?: string | undefined }): string {
    return metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
  }

  private notify(collection: Collection, type: string, object: StoredObject): void {
    const key = `${collection.apiVersion}/${collection.plural}`;
    const line = `${JSON.stringify({ type, object })}\n`;
    const history = this.history.get(key) ?? [];
    history.push({ version: Number(object.metadata.resourceVersion), line });
    this.history.set(key, history);
    for (const res of this.watchers.get(key) ?? []) res.write(line);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const path = url.pathname.replace(/\/$/, '');
    const request = `${req.method} ${path}`;
    this.requests.push(request);
    if (this.held?.matches(request)) await this.held.gate;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const send = (code: number, payload: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const status = (code: number, reason: string, message: string) =>
      send(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

    if (path === '/version') return send(200, { major: '1', minor: '35', gitVersion: 'v1.35.4' });
    if (req.method === 'POST' && path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') {
      const attributes = body?.spec?.resourceAttributes ?? {};
      const allowed = !this.denied.has(`${attributes.verb} ${attributes.resource}`);
      return send(201, { ...body, status: { allowed } });
    }
    // Discovery of a group version: the collections registered in it.
    const discovered = [...this.collections.values()].filter((c) => groupPath(c.apiVersion) === path);
    if (discovered.length > 0) {
      return send(200, {
        kind: 'APIResourceList',
        groupVersion: discovered[0]!.apiVersion,
        resources: discovered.map((c) => ({
          name: c.plural,
          kind: c.kind,
          namespaced: c.namespaced,
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        })),
      });
    }
    for (const collection of this.collections.values()) {
      const base = groupPath(collection.apiVersion);
      const match = new RegExp(
        `^${base}(?:/namespaces/([^/]+))?/${collection.plural}(?:/([^/]+))?(/status)?$`,
      ).exec(path);
      if (!match) continue;
      const [, namespace, name, subresource] = match;
      if (name === undefined) {
        if (req.method !== 'GET') return status(405, 'MethodNotAllowed', 'not served here');
        const items = [...collection.objects.values()].filter(
          (o) => !namespace || o.metadata.namespace === namespace,
        );
        if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
          res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
          // As an apiserver does: the headers go at once, the events as they come.
          res.flushHeaders();
          const key = `${collection.apiVersion}/${collection.plural}`;
          const from = Number(url.searchParams.get('resourceVersion') ?? this.version);
          for (const event of this.history.get(key) ?? []) if (event.version > from) res.write(event.line);
          const set = this.watchers.get(key) ?? new Set();
          set.add(res);
          this.watchers.set(key, set);
          res.on('close', () => set.delete(res));
          return;
        }
        return send(200, {
          kind: `${collection.kind}List`,
          apiVersion: collection.apiVersion,
          metadata: { resourceVersion: String(this.version) },
          items,
        });
      }
      const key = this.keyOf({ name, namespace });
      const found = collection.objects.get(key);
      if (!found) return status(404, 'NotFound', `${collection.plural} "${name}" not found`);
      if (req.method === 'GET') return send(200, found);
      if (req.method === 'PATCH') {
        const patched = applyMergePatch(found, subresource ? { status: body?.status } : body) as StoredObject;
        return send(200, this.put(collection.apiVersion, collection.plural, patched));
      }
      return status(405, 'MethodNotAllowed', 'not served here');
    }
    return status(404, 'NotFound', `${path} is not served`);
  }
}
