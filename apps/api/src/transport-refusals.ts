// Refusals that happen before a route runs: Node's HTTP parser refusing a request (headers too
// large, a malformed request line, too slow to arrive) and a path served for other methods.
// Each is problem+json like every other error of the API.
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiProblem, problemContentType } from './problems.ts';

/** The problem for a request Node's HTTP parser refused, by the error code it reports. */
export function clientErrorProblem(code: string | undefined): ApiProblem {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiProblem(
        'headers-too-large',
        'the request line and headers are larger than the server accepts (16 KiB); send a shorter URL or fewer, smaller headers',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiProblem('payload-too-large', 'the chunk extensions of the body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiProblem(
        'request-timeout',
        'the request did not arrive in full within the time allowed (--request-timeout-seconds)',
      );
    default:
      return new ApiProblem(
        'bad-request',
        'the request is not valid HTTP/1.1 (its request line, a header or the body framing could not be parsed)',
      );
  }
}

/** A whole HTTP/1.1 response carrying the problem; the connection is closed after it. */
export function rawProblemResponse(problem: ApiProblem): string {
  const body = JSON.stringify(problem.toProblem(undefined));
  const reason = problem.toProblem(undefined).title;
  return [
    `HTTP/1.1 ${problem.status} ${reason}`,
    `Content-Type: ${problemContentType}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * fastify's clientErrorHandler: Node calls it for a request its parser refused (the server
 * would otherwise answer a bare 431 or 400, and fastify a plain-JSON one), before any route or
 * hook. Nothing of the request was read, so the answer says only what is wrong.
 */
export function problemClientErrorHandler(log: Logger): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    // A reset connection has no one to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const problem = clientErrorProblem(err.code);
    log.debug({ code: err.code, status: problem.status }, 'refused a request the HTTP parser could not take');
    if (socket.writable) socket.end(rawProblemResponse(problem));
    // end() flushes the answer; a client that does not close its side is cut off soon after.
    setTimeout(() => socket.destroy(), 1_000).unref();
  };
}

/** A route pattern of fastify's router as a regular expression over a concrete path. */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment === '*'
        ? '.*'
        : segment
            .split(/(:[A-Za-z0-9_]+)/)
            .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
            .join(''),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Which methods the router serves: fed by the onRoute hook, asked by the not-found handler. */
export class RouteMethods {
  readonly #routes: Array<{ pattern: RegExp; method: string }> = [];

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method])
      this.#routes.push({ pattern: routePattern(url), method: m });
  }

  /** The methods a path is served for (sorted), empty when no route has that path. */
  allowedFor(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.#routes) if (route.pattern.test(path)) methods.add(route.method);
    return [...methods].sort();
  }
}
