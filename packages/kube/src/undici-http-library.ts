import {
  type HttpLibrary,
  type RequestContext,
  ResponseContext,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import { type Dispatcher, errors, request } from 'undici';
import { TimeoutError } from './with-timeout.ts';

/**
 * The transport under client-node's generated API clients: undici's `request` instead of
 * client-node's default, undici's `fetch`. fetch wraps every call in WHATWG Request, Headers
 * and web streams; in the dispatch benchmark's CPU profile that wrapping was about a third of
 * the controller's CPU. `request` sends the same bytes over the same connection pool and
 * hands back the body as one buffer. Serialisation, errors (ApiException) and typed models
 * stay client-node's.
 *
 * A request whose answer does not start within `answerTimeoutMs` of being sent, or whose body
 * stalls that long, fails with a TimeoutError. undici's own header and body timers bound it
 * (they run for every request anyway, at 300 s by default): an AbortSignal per request
 * (`AbortSignal.timeout`) cost the controller a signal, a weakly held timer and an abort
 * listener per call, and fired 15 s after every request, answered or not. The bound starts
 * once the request is on a connection (connecting has undici's own 10 s limit); a request
 * waits for one only while every connection of the pool is busy.
 */
export function undiciHttpLibrary(answerTimeoutMs: number): HttpLibrary {
  return wrapHttpLibrary({
    async send(context: RequestContext): Promise<ResponseContext> {
      let response: Dispatcher.ResponseData;
      let data: Buffer;
      try {
        response = await request(context.getUrl(), {
          method: context.getHttpMethod() as Dispatcher.HttpMethod,
          headers: context.getHeaders(),
          body: requestBody(context.getBody()),
          signal: context.getSignal() ?? null,
          dispatcher: context.getDispatcher() as Dispatcher | undefined,
          headersTimeout: answerTimeoutMs,
          bodyTimeout: answerTimeoutMs,
        });
        data = Buffer.from(await response.body.arrayBuffer());
      } catch (err) {
        if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError) {
          const { pathname } = new URL(context.getUrl());
          throw new TimeoutError(
            `${context.getHttpMethod()} ${pathname} got no answer within ${answerTimeoutMs / 1000}s`,
            { cause: err },
          );
        }
        throw err;
      }
      return new ResponseContext(response.statusCode, flatHeaders(response.headers), {
        text: async () => data.toString('utf8'),
        binary: async () => data,
        // Only a streaming caller would want this; client-node's generated clients read whole bodies.
        stream: () => null,
      });
    },
  });
}

function requestBody(body: ReturnType<RequestContext['getBody']>): string | undefined {
  if (body === undefined || typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  // FormData is only for uploads, which no caller of ours makes: refuse rather than send it wrong.
  throw new TypeError('this transport sends string bodies only');
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
