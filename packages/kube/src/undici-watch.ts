import {
  HttpMethod,
  type KubeConfig,
  RequestContext,
  type SecurityAuthentication,
  type Watch,
} from '@kubernetes/client-node';
import { type Dispatcher, request } from 'undici';
import { connectionPool, requestAuthentication } from './cluster-api-clients.ts';

/** Splits a stream of text into lines; a line split across chunks is held until its end arrives. */
export class LineSplitter {
  private pending = '';

  /** The complete lines in `chunk` (with what was held before), without their line ends. */
  push(chunk: string): string[] {
    const text = this.pending + chunk;
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf('\n', start); end >= 0; end = text.indexOf('\n', start)) {
      const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
      if (line.length > 0) lines.push(line);
      start = end + 1;
    }
    this.pending = text.slice(start);
    return lines;
  }
}

type WatchCallback = Parameters<Watch['watch']>[2];
type WatchDone = Parameters<Watch['watch']>[3];

/**
 * A watch with client-node's `Watch.watch` contract, over undici's `request` and its Node
 * stream instead of `fetch`, web streams and readline: the watch streams carry every Job
 * event the controller sees, and that conversion chain was a large share of its CPU.
 *
 * Differences, on purpose: one connection pool per watcher, kept across its watches (a watch
 * ends every `timeoutSeconds`; client-node opens a new pool, and a new TLS handshake, each
 * time), speaking HTTP/1.1 as the request pool does (`connectionPool`): client-node's pool
 * lets undici choose HTTP/2, whose Node core costs more CPU per event than undici's HTTP/1.1
 * parser; a line that is not JSON, or a callback that throws, ends the watch with that error,
 * so the informer relists instead of silently missing an event.
 */
export class UndiciWatch implements Pick<Watch, 'watch'> {
  private dispatcher: Promise<Dispatcher | undefined> | undefined;
  private readonly kubeConfig: KubeConfig;
  private readonly authentication: SecurityAuthentication;
  /** Abort when nothing arrives for this long (client-node's own default). */
  private readonly inactivityTimeoutMs: number;

  constructor(kubeConfig: KubeConfig, inactivityTimeoutMs = 30_000) {
    this.kubeConfig = kubeConfig;
    this.authentication = requestAuthentication(kubeConfig);
    this.inactivityTimeoutMs = inactivityTimeoutMs;
  }

  async watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(queryParams)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    // Headers (a bearer token may be refreshed) come from the kubeconfig every time; the pool
    // is built once (behind a proxy, the one client-node's authentication built first).
    const context = new RequestContext(url.toString(), HttpMethod.GET);
    await this.authentication.applySecurityAuthentication(context);
    // Two connections: a new watch may start while the last one's socket is still closing.
    this.dispatcher ??= connectionPool(this.kubeConfig, 2).then(
      (pool) => pool ?? (context.getDispatcher() as Dispatcher | undefined),
    );
    const dispatcher = await this.dispatcher;

    const controller = new AbortController();
    let timedOut = false;
    let finished = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.inactivityTimeoutMs);
    timer.unref();
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const abortedByCaller = controller.signal.aborted && !timedOut;
      controller.abort();
      if (timedOut) done(new DOMException('no watch event within the inactivity timeout', 'TimeoutError'));
      else done(abortedByCaller ? null : err);
    };

    try {
      const response = await request(url, {
        method: 'GET',
        headers: context.getHeaders(),
        ...(dispatcher ? { dispatcher } : {}),
        signal: controller.signal,
      });
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw Object.assign(new Error(`watch ${path}: HTTP ${response.statusCode}`), {
          statusCode: response.statusCode,
        });
      }
      timer.refresh();
      const lines = new LineSplitter();
      const body = response.body;
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => {
        timer.refresh();
        try {
          for (const line of lines.push(chunk)) {
            const event = JSON.parse(line) as { type: string; object: unknown };
            callback(event.type, event.object, event);
          }
        } catch (err) {
          body.destroy();
          finish(err);
        }
      });
      body.on('error', finish);
      body.on('end', () => finish(null));
      body.on('close', () => finish(null));
    } catch (err) {
      finish(err);
    }
    return controller;
  }
}
