import { createHash } from 'node:crypto';
import { sharedPoolConfiguration, statusCodeOf } from '@jobrelay/kube';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  type KubeConfig,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';

/** Who the caller is, as the management cluster's TokenReview says. */
export interface Caller {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What a route needs, in SubjectAccessReview terms. */
export type Permission =
  | {
      verb: string;
      group: string;
      resource: string;
      subresource?: string;
      namespace?: string;
      name?: string;
    }
  | { verb: string; nonResourceURL: string };

/** `update workerclusters.jobrelay.dev/drain "w1"`, `get pods/log in namespace a`, `get /metrics`. */
export function describePermission(permission: Permission): string {
  if ('nonResourceURL' in permission) return `${permission.verb} ${permission.nonResourceURL}`;
  const resource = `${permission.resource}${permission.group ? `.${permission.group}` : ''}${permission.subresource ? `/${permission.subresource}` : ''}`;
  const name = permission.name ? ` ${JSON.stringify(permission.name)}` : '';
  const where = permission.namespace ? ` in namespace ${permission.namespace}` : '';
  return `${permission.verb} ${resource}${name}${where}`;
}

export interface AccessReviewerOptions {
  /** Credentials of the API itself: it needs create on tokenreviews and subjectaccessreviews. */
  kubeConfig: KubeConfig;
  /** How long an answer is reused. Revoked rights take at most this long to bite; capped at 10 s. */
  cacheSeconds: number;
  /**
   * The audiences a token must be meant for (--token-audiences), e.g. `jobrelay-api` for tokens
   * minted with `kubectl create token NAME --audience jobrelay-api`; empty accepts the
   * apiserver's own audiences, so callers hand the API a token the apiserver would take too.
   */
  audiences?: string[];
  now?: () => number;
}

interface Cached<T> {
  value: T;
  expires: number;
}

/** How a review may use the cache. */
export interface ReviewOptions {
  /**
   * Ask the apiserver even when a cached answer exists, and cache the new one: an open stream's
   * periodic re-check must see a revoked right, not the answer it was opened with.
   */
  fresh?: boolean;
}

/** Bounded, so a flood of distinct tokens cannot grow memory without limit. */
const maxCacheEntries = 10_000;

/** Thrown when the management apiserver cannot answer a review: the caller gets 503, not 401/403. */
export class ReviewUnavailableError extends Error {}

/**
 * Authentication by TokenReview and authorization by SubjectAccessReview against the
 * management cluster, so the API grants exactly what the caller's RBAC grants through
 * kubectl. Answers (allowed and denied alike) are cached for at most 10 s.
 */
export class AccessReviewer {
  private readonly authentication: AuthenticationV1Api;
  private readonly authorization: AuthorizationV1Api;
  private readonly ttlMs: number;
  private readonly audiences: string[];
  private readonly now: () => number;
  private readonly tokens = new Map<string, Cached<Caller | undefined>>();
  private readonly decisions = new Map<string, Cached<boolean>>();
  /** Reviews sent, for tests and metrics: the cache must keep this low. */
  reviewsSent = 0;
  /** TokenReviews sent (of reviewsSent): what a flood of bad tokens would cost without a limit. */
  tokenReviewsSent = 0;

  constructor(options: AccessReviewerOptions) {
    // One kept connection pool for the reviews: client-node's own clients open a TLS
    // connection per request, and a cache miss costs up to two reviews.
    const pool = sharedPoolConfiguration(options.kubeConfig);
    this.authentication = new AuthenticationV1Api(pool);
    this.authorization = new AuthorizationV1Api(pool);
    this.ttlMs = Math.min(Math.max(options.cacheSeconds, 0), 10) * 1000;
    this.audiences = options.audiences ?? [];
    this.now = options.now ?? Date.now;
  }

  /** The caller behind a bearer token, or undefined when the apiserver does not accept it. */
  async authenticate(token: string, options: ReviewOptions = {}): Promise<Caller | undefined> {
    // Only a digest of the token is kept in memory.
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = options.fresh ? undefined : this.cached(this.tokens, key);
    if (hit) return hit.value;
    let review: Awaited<ReturnType<AuthenticationV1Api['createTokenReview']>>;
    try {
      this.reviewsSent += 1;
      this.tokenReviewsSent += 1;
      review = await this.authentication.createTokenReview({
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(this.audiences.length > 0 ? { audiences: this.audiences } : {}) },
        },
      });
    } catch (err) {
      throw new ReviewUnavailableError(`TokenReview failed: ${statusLine(err)}`);
    }
    const user =
      review.status?.authenticated && audienceMatches(this.audiences, review.status.audiences)
        ? review.status.user
        : undefined;
    const caller: Caller | undefined = user?.username
      ? {
          username: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups ?? [],
          ...(user.extra ? { extra: user.extra } : {}),
        }
      : undefined;
    this.remember(this.tokens, key, caller);
    return caller;
  }

  /** Whether the caller may do this, as RBAC (or any authorizer of the apiserver) decides. */
  async allowed(caller: Caller, permission: Permission, options: ReviewOptions = {}): Promise<boolean> {
    const key = JSON.stringify([caller.username, caller.uid, caller.groups, caller.extra, permission]);
    const hit = options.fresh ? undefined : this.cached(this.decisions, key);
    if (hit) return hit.value;
    let review: Awaited<ReturnType<AuthorizationV1Api['createSubjectAccessReview']>>;
    try {
      this.reviewsSent += 1;
      review = await this.authorization.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: caller.username,
            ...(caller.uid ? { uid: caller.uid } : {}),
            groups: caller.groups,
            ...(caller.extra ? { extra: caller.extra } : {}),
            ...('nonResourceURL' in permission
              ? { nonResourceAttributes: { verb: permission.verb, path: permission.nonResourceURL } }
              : { resourceAttributes: resourceAttributes(permission) }),
          },
        },
      });
    } catch (err) {
      throw new ReviewUnavailableError(`SubjectAccessReview failed: ${statusLine(err)}`);
    }
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    this.remember(this.decisions, key, allowed);
    return allowed;
  }

  /** The first of these the caller lacks, or undefined when every one is granted. */
  async firstMissing(
    caller: Caller,
    permissions: readonly Permission[],
    options: ReviewOptions = {},
  ): Promise<Permission | undefined> {
    const answers = await Promise.all(permissions.map((p) => this.allowed(caller, p, options)));
    return permissions[answers.indexOf(false)];
  }

  private cached<T>(cache: Map<string, Cached<T>>, key: string): Cached<T> | undefined {
    const hit = cache.get(key);
    if (hit && hit.expires > this.now()) return hit;
    if (hit) cache.delete(key);
    return undefined;
  }

  private remember<T>(cache: Map<string, Cached<T>>, key: string, value: T): void {
    if (this.ttlMs <= 0) return;
    if (cache.size >= maxCacheEntries) {
      // Oldest first: Map keeps insertion order.
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(key, { value, expires: this.now() + this.ttlMs });
  }
}

/**
 * With audiences asked for, the apiserver must name one of them as the token's: the TokenReview
 * API says a client that sets spec.audiences should check status.audiences, so an authenticator
 * that ignores audiences cannot pass a token meant for another service.
 */
export function audienceMatches(wanted: readonly string[], granted: readonly string[] | undefined): boolean {
  if (wanted.length === 0) return true;
  return (granted ?? []).some((audience) => wanted.includes(audience));
}

function resourceAttributes(
  permission: Exclude<Permission, { nonResourceURL: string }>,
): V1ResourceAttributes {
  return {
    verb: permission.verb,
    group: permission.group,
    resource: permission.resource,
    ...(permission.subresource ? { subresource: permission.subresource } : {}),
    ...(permission.namespace ? { namespace: permission.namespace } : {}),
    ...(permission.name ? { name: permission.name } : {}),
  };
}

/** The HTTP status of a failed review, never its body (which could echo the token). */
function statusLine(err: unknown): string {
  const code = statusCodeOf(err);
  return code ? `HTTP ${code}` : err instanceof Error ? err.message.split('\n')[0]! : 'unknown error';
}
