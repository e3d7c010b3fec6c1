import { ApiException, type Configuration, HttpMethod } from '@kubernetes/client-node';

/**
 * GET `path` through a client-node configuration (its server, credentials, middleware and
 * transport: `sharedPoolConfiguration`'s pool and timeouts) and hand back the body as parsed,
 * plain JSON. The generated clients and KubernetesObjectApi convert a built-in kind's body
 * into typed models (times as Date, unknown fields dropped); lists of any kind, core ones
 * included, come back here as the apiserver sent them. A status outside 2xx throws client-node's
 * ApiException, as the generated clients do, so `statusCodeOf` and `isNotFound` read it alike.
 */
export async function getPlainJson<T>(
  configuration: Configuration,
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<T> {
  let request = configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
  request.setHeaderParam('Accept', 'application/json');
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) request.setQueryParam(name, String(value));
  }
  await configuration.authMethods.default?.applySecurityAuthentication(request);
  for (const middleware of configuration.middleware) request = await middleware.pre(request).toPromise();
  let response = await configuration.httpApi.send(request).toPromise();
  for (const middleware of configuration.middleware) response = await middleware.post(response).toPromise();
  const text = await response.body.text();
  if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
    throw new ApiException(
      response.httpStatusCode,
      'Unsuccessful HTTP Request',
      parseOrText(text),
      response.headers,
    );
  }
  return JSON.parse(text) as T;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
