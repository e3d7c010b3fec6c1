import type { Problem } from '@jobrelay/api-types';

/** An answer the API refused, with its problem+json detail (never the token). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, detail: string) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

/** Reads a refusal as the API words it (problem+json `detail`), else a plain description. */
async function refusal(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const problem = JSON.parse(text) as Problem;
    if (problem.detail) return new ApiError(response.status, problem.code ?? 'error', problem.detail);
  } catch {
    // not problem+json: a proxy in between, or the API is not there
  }
  return new ApiError(
    response.status,
    'error',
    `the API answered HTTP ${response.status} ${response.statusText}`,
  );
}

/**
 * Calls the API of the origin that served the page, with the caller's bearer token in the
 * Authorization header (never in a URL, so it reaches no log or history).
 */
export class ApiClient {
  private readonly token: string;
  constructor(token: string) {
    this.token = token;
  }

  headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}` };
  }

  async request(method: 'GET' | 'POST', path: string, signal?: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers: this.headers(),
        cache: 'no-store',
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ApiError(0, 'network', 'the API cannot be reached; check that it runs and retry');
    }
    if (!response.ok) throw await refusal(response);
    return response;
  }

  async get<T>(path: string): Promise<T> {
    return (await (await this.request('GET', path)).json()) as T;
  }

  async post<T>(path: string): Promise<T> {
    return (await (await this.request('POST', path)).json()) as T;
  }

  async text(path: string): Promise<string> {
    return (await this.request('GET', path)).text();
  }

  /** Every item of a paginated list (`continue` tokens), up to `maxItems`; says whether it stopped short. */
  async list<T>(path: string, maxItems = 5_000): Promise<{ items: T[]; truncated: boolean }> {
    const items: T[] = [];
    let next: string | undefined;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const page = await this.get<{ items: T[]; continue?: string }>(
        `${path}${separator}limit=1000${next ? `&continue=${encodeURIComponent(next)}` : ''}`,
      );
      items.push(...page.items);
      next = page.continue;
    } while (next && items.length < maxItems);
    return { items, truncated: next !== undefined };
  }
}
