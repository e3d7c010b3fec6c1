import { describe, expect, it } from 'vitest';
import { clientErrorProblem, RouteMethods, rawProblemResponse } from '../src/transport-refusals.ts';

describe('clientErrorProblem', () => {
  it.each([
    { code: 'HPE_HEADER_OVERFLOW', status: 431, problem: 'headers-too-large' },
    { code: 'HPE_CHUNK_EXTENSIONS_OVERFLOW', status: 413, problem: 'payload-too-large' },
    { code: 'ERR_HTTP_REQUEST_TIMEOUT', status: 408, problem: 'request-timeout' },
    { code: 'HPE_INVALID_METHOD', status: 400, problem: 'bad-request' },
    { code: 'HPE_INVALID_HEADER_TOKEN', status: 400, problem: 'bad-request' },
    { code: undefined, status: 400, problem: 'bad-request' },
  ])('$code is $status $problem', ({ code, status, problem }) => {
    const refusal = clientErrorProblem(code);
    expect(refusal.status).toBe(status);
    expect(refusal.code).toBe(problem);
  });
});

describe('rawProblemResponse', () => {
  it('is a whole HTTP/1.1 response with a problem+json body of the right length', () => {
    const response = rawProblemResponse(clientErrorProblem('HPE_HEADER_OVERFLOW'));
    const [head, body] = response.split('\r\n\r\n');
    const lines = head!.split('\r\n');
    expect(lines[0]).toBe('HTTP/1.1 431 Request header fields too large');
    expect(lines).toContain('Content-Type: application/problem+json');
    expect(lines).toContain('Connection: close');
    expect(lines).toContain(`Content-Length: ${Buffer.byteLength(body!)}`);
    expect(JSON.parse(body!)).toMatchObject({
      type: 'https://jobrelay.dev/problems/headers-too-large',
      status: 431,
      code: 'headers-too-large',
    });
  });
});

describe('RouteMethods', () => {
  const routes = new RouteMethods();
  routes.add('GET', '/api/v1/clusters');
  routes.add(['POST', 'GET'], '/api/v1/clusters');
  routes.add('GET', '/api/v1/clusters/:name');
  routes.add('DELETE', '/api/v1/clusters/:name');
  routes.add('GET', '/api/v1/workloads/:kind/:namespace/:name/logs');
  routes.add('GET', '/docs/static/*');
  routes.add('GET', '/openapi.json');

  it.each([
    { path: '/api/v1/clusters', allowed: ['GET', 'POST'] },
    { path: '/api/v1/clusters/worker-1', allowed: ['DELETE', 'GET'] },
    { path: '/api/v1/workloads/job/a/b/logs', allowed: ['GET'] },
    { path: '/docs/static/swagger-ui.css', allowed: ['GET'] },
    // A parameter is one segment: these are no route at all (404, not 405).
    { path: '/api/v1/clusters/a/b', allowed: [] },
    { path: '/api/v1/workloads/job/a/logs', allowed: [] },
    // The pattern's dot is a dot.
    { path: '/openapiXjson', allowed: [] },
  ])('$path is served for $allowed', ({ path, allowed }) => {
    expect(routes.allowedFor(path)).toEqual(allowed);
  });
});
