import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Writable } from 'node:stream';
import { ApiError, type Problem, UnreachableError } from './plugin-errors.ts';

export interface ApiClientOptions {
  /** The API's base URL; a path prefix (behind a proxy) is kept. */
  baseUrl: URL;
  token: string;
  /** PEM CA bundle for an HTTPS API with a private CA. */
  ca?: Buffer;
  /** Until response headers arrive; a stalled API is reported as unreachable rather than hanging. */
  timeoutMs?: number;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** What every list answer has in common. */
export interface Page<T> {
  items: T[];
  continue?: string;
}

/**
 * A small client of the jobrelay admin API on node:http(s): those take a private CA directly and
 * stream a body as it arrives (logs -f). Every error answer becomes an ApiError carrying the
 * problem+json body; anything below HTTP (refused, DNS, TLS, timeout) an UnreachableError.
 */
export class JobrelayApiClient {
  readonly #options: ApiClientOptions;

  constructor(options: ApiClientOptions) {
    if (options.baseUrl.protocol !== 'http:' && options.baseUrl.protocol !== 'https:') {
      throw new UnreachableError(`the API URL ${options.baseUrl.href} is not http:// or https://`);
    }
    const refusal = plainHttpRefusal(options.baseUrl);
    if (refusal) throw new UnreachableError(refusal);
    this.#options = options;
  }

  url(path: string, query: Query = {}): URL {
    const base = new URL(
      this.#options.baseUrl.href.endsWith('/')
        ? this.#options.baseUrl.href
        : `${this.#options.baseUrl.href}/`,
    );
    const url = new URL(path.replace(/^\//, ''), base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    }
    return url;
  }

  async json<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    const response = await this.#send(method, this.url(path, options.query), options.body);
    const text = await readText(response);
    if (text.length === 0) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiError(response.statusCode ?? 0, 'with a body that is not JSON', undefined);
    }
  }

  /** Every page of a list, following `continue` until the API gives none. */
  async listAll<T, P extends Page<T> = Page<T>>(
    path: string,
    query: Query,
    limit: number,
  ): Promise<{ items: T[]; last: P }> {
    const items: T[] = [];
    let token: string | undefined;
    for (;;) {
      const page = await this.json<P>('GET', path, { query: { ...query, limit, continue: token } });
      items.push(...(page.items ?? []));
      token = page.continue;
      if (!token) return { items, last: page };
    }
  }

  /** Copies a text body to `sink` chunk by chunk as it arrives, honouring back-pressure. */
  async stream(path: string, query: Query, sink: Writable): Promise<void> {
    const response = await this.#send('GET', this.url(path, query), undefined, { streaming: true });
    for await (const chunk of response) {
      if (!sink.write(chunk)) await new Promise((resolve) => sink.once('drain', resolve));
    }
  }

  #send(method: string, url: URL, body: unknown, { streaming = false } = {}): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#options.token}`,
      accept: streaming
        ? 'text/plain, application/problem+json'
        : 'application/json, application/problem+json',
      'user-agent': 'kubectl-jobrelay',
    };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = this.#options.timeoutMs ?? 30_000;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        url,
        { method, headers, ...(this.#options.ca ? { ca: this.#options.ca } : {}) },
        (res) => {
          // The timeout guards the wait for an answer; a followed log stream may then stay quiet for long.
          req.setTimeout(0);
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            resolve(res);
            return;
          }
          readText(res).then(
            (text) => reject(apiError(status, res.statusMessage ?? '', res.headers['content-type'], text)),
            reject,
          );
        },
      );
      req.setTimeout(timeoutMs, () => {
        req.destroy(
          new UnreachableError(`no answer from the API at ${url.origin} within ${timeoutMs / 1000}s`),
        );
      });
      req.on('error', (err) => {
        if (err instanceof UnreachableError) reject(err);
        else
          reject(new UnreachableError(`cannot reach the API at ${url.origin}: ${describeNetworkError(err)}`));
      });
      req.end(payload);
    });
  }
}

/**
 * Why a bearer token must not go to this URL, or undefined when it may: over plain http only to
 * this machine (the sandbox's API), since anyone on the path could read the token and act as you.
 */
export function plainHttpRefusal(url: URL): string | undefined {
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return undefined;
  return `refusing to send your bearer token in clear over plain http to ${url.href} (not a loopback address): use the API's https:// URL (--api-url or JOBRELAY_API_URL; --certificate-authority FILE for a private CA); plain http is only for an API on this machine (127.0.0.1, ::1, localhost)`;
}

/** localhost, 127.0.0.0/8, ::1 (and ::ffff:127.x.y.z), as URL.hostname writes them. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  return /^::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.test(host);
}

async function readText(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function apiError(
  status: number,
  statusText: string,
  contentType: string | undefined,
  text: string,
): ApiError {
  // Some servers send problem details as plain application/json; accept either when it parses.
  if (contentType && /json/.test(contentType)) {
    try {
      const parsed = JSON.parse(text) as Problem;
      if (parsed && typeof parsed === 'object') return new ApiError(status, statusText, parsed);
    } catch {
      // not JSON after all: reported by status line below
    }
  }
  return new ApiError(status, statusText, undefined);
}

function describeNetworkError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return 'connection refused (is it running, and is the URL right?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN'
  ) {
    return `${err.message} (pass its CA with --certificate-authority or JOBRELAY_API_CA)`;
  }
  return code ? `${code}: ${err.message}` : err.message;
}
