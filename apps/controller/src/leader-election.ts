import {
  type Clock,
  describeApiError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  microTime,
  sharedPoolConfiguration,
  systemClock,
  withTimeout,
} from '@jobrelay/kube';
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';

/** client-go's leader election timings, which the controller takes as its defaults (15 s, 10 s, 2 s). */
export interface LeaseTimings {
  /** How long a holder that stopped renewing keeps the Lease, as the others count it. */
  leaseDurationMs: number;
  /** How long the holder keeps trying to renew before it gives up leading. Shorter than the duration. */
  renewDeadlineMs: number;
  /** Between attempts to acquire, and between renewals. */
  retryPeriodMs: number;
}

/** What this process last read in the Lease, and when it first read it in that state. */
export interface ObservedLease {
  /** Holder and renewal time: a change of either means the holder is alive. */
  signature: string;
  holder: string;
  durationMs: number;
  transitions: number;
  observedAtMs: number;
}

export type LeaseStep =
  /** No Lease yet: create it with this process as the holder. */
  | { kind: 'create' }
  /** Free, expired or already ours: write this process as the holder over the version read. */
  | { kind: 'take'; transitions: number }
  /** Held by someone else who renewed within the duration. */
  | { kind: 'wait'; holder: string; expiresInMs: number };

export interface LeaseRecord {
  holderIdentity?: string;
  renewTime?: Date | string;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
}

/**
 * What to do with the Lease as read, as client-go's leaderelection decides: expiry is counted
 * on this process's clock from when it first saw the current holder and renewal, never from the
 * holder's own timestamps, so clocks that disagree between machines do not matter.
 */
export function nextLeaseStep(input: {
  lease: LeaseRecord | undefined;
  previous: ObservedLease | undefined;
  identity: string;
  nowMs: number;
}): { step: LeaseStep; observed: ObservedLease | undefined } {
  const { lease, previous, identity, nowMs } = input;
  if (!lease) return { step: { kind: 'create' }, observed: undefined };
  const holder = lease.holderIdentity ?? '';
  const renewed = lease.renewTime instanceof Date ? lease.renewTime.toISOString() : (lease.renewTime ?? '');
  const signature = `${holder}\u0000${renewed}`;
  const observed: ObservedLease = {
    signature,
    holder,
    durationMs: (lease.leaseDurationSeconds ?? 0) * 1000,
    transitions: lease.leaseTransitions ?? 0,
    observedAtMs: previous?.signature === signature ? previous.observedAtMs : nowMs,
  };
  if (holder === '' || holder === identity)
    return {
      step: { kind: 'take', transitions: observed.transitions + (holder === identity ? 0 : 1) },
      observed,
    };
  const expiresInMs = observed.observedAtMs + observed.durationMs - nowMs;
  if (expiresInMs > 0) return { step: { kind: 'wait', holder, expiresInMs }, observed };
  return { step: { kind: 'take', transitions: observed.transitions + 1 }, observed };
}

export interface LeaderElectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  /** Unique per replica: the pod's name in a Deployment (a restarted container keeps it). */
  identity: string;
  timings: LeaseTimings;
  log: Logger;
  clock?: Clock;
  /** This process holds the Lease now (called once, not awaited: renewals go on meanwhile). */
  onStartedLeading: () => Promise<void> | void;
  /**
   * It could not renew within the renew deadline: another replica may lead soon, so whatever
   * leads must stop at once (the controller exits, as client-go's users do).
   */
  onLostLeadership: () => void;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease: one replica reconciles, the others keep
 * their caches warm and take over within the lease duration when it stops renewing, or at
 * their next attempt when it releases the Lease on the way out.
 */
export class LeaderElector {
  private readonly options: LeaderElectorOptions;
  private readonly api: CoordinationV1Api;
  private readonly clock: Clock;
  private observed: ObservedLease | undefined;
  private leading = false;
  private stopped = false;
  private lastRenewMs = 0;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options.timings;
    if (!(retryPeriodMs < renewDeadlineMs && renewDeadlineMs < leaseDurationMs))
      throw new Error(
        'leader election: the retry period must be shorter than the renew deadline, and that than the lease duration',
      );
    this.options = options;
    // One kept connection pool: client-node's own client opens a TLS connection per request,
    // two every renewal (a read and a replace), for as long as the process runs.
    this.api = new CoordinationV1Api(
      sharedPoolConfiguration(options.kubeConfig, { requestTimeoutMs: renewDeadlineMs }),
    );
    this.clock = options.clock ?? systemClock;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Who held the Lease when it was last read ('' when free or not read yet). */
  get lastSeenHolder(): string {
    return this.observed?.holder ?? '';
  }

  start(): void {
    this.running ??= this.loop();
  }

  /**
   * Stops trying, and frees the Lease if this process holds it, so that another replica takes
   * over at its next attempt instead of after the lease duration. Call once nothing that only
   * the leader may do is still running.
   */
  async release(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    if (!this.leading) return;
    this.leading = false;
    const { namespace, name, identity, log } = this.options;
    try {
      const lease = await this.call(this.api.readNamespacedLease({ name, namespace }), 'read');
      if (lease.spec?.holderIdentity !== identity) return;
      const now = microTime(this.clock.now());
      await this.call(
        this.api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            ...lease,
            // As client-go releases: no holder, and a one-second duration for those that
            // judge by the duration alone.
            spec: {
              ...lease.spec,
              holderIdentity: undefined,
              leaseDurationSeconds: 1,
              acquireTime: now,
              renewTime: now,
            },
          },
        }),
        'release',
      );
      log.info({ lease: `${namespace}/${name}` }, 'released the leader lease');
    } catch (err) {
      log.warn(
        { err: describeApiError(err) },
        'could not release the leader lease; the next leader waits for it to expire',
      );
    }
  }

  private async loop(): Promise<void> {
    const { log, timings } = this.options;
    while (!this.stopped) {
      if (!this.leading) {
        if (await this.attempt()) {
          this.leading = true;
          this.lastRenewMs = this.clock.now();
          log.info({ identity: this.options.identity, lease: this.leaseName() }, 'became the leader');
          // Not awaited: renewals must go on while the new leader catches up.
          void Promise.resolve()
            .then(this.options.onStartedLeading)
            .catch((err: unknown) => log.error({ err }, 'starting to lead failed'));
        }
        // client-go jitters acquisition by up to 20 %, so waiting replicas do not move in step.
        await this.sleep(timings.retryPeriodMs * (1 + 0.2 * Math.random()));
        continue;
      }
      await this.sleep(timings.retryPeriodMs);
      if (this.stopped) return;
      if (await this.attempt()) {
        this.lastRenewMs = this.clock.now();
      } else if (
        // Someone else holds it: it judged the Lease expired, so it may be acting already.
        (this.observed !== undefined &&
          this.observed.holder !== '' &&
          this.observed.holder !== this.options.identity) ||
        this.clock.now() - this.lastRenewMs >= timings.renewDeadlineMs
      ) {
        this.leading = false;
        this.stopped = true;
        log.error(
          {
            lease: this.leaseName(),
            lastRenewedMsAgo: this.clock.now() - this.lastRenewMs,
            holder: this.lastSeenHolder,
          },
          'lost the leader lease: could not renew it within the renew deadline',
        );
        this.options.onLostLeadership();
        return;
      }
    }
  }

  /** One read and, when the Lease is free, expired or ours, one write. True when this process holds it now. */
  private async attempt(): Promise<boolean> {
    const { namespace, name, identity, log, timings } = this.options;
    try {
      let lease: V1Lease | undefined;
      try {
        lease = await this.call(this.api.readNamespacedLease({ name, namespace }), 'read');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const nowMs = this.clock.now();
      const { step, observed } = nextLeaseStep({
        lease: lease?.spec,
        previous: this.observed,
        identity,
        nowMs,
      });
      this.observed = observed;
      if (step.kind === 'wait') return false;
      const now = microTime(nowMs);
      const keepAcquireTime = step.kind === 'take' && lease?.spec?.holderIdentity === identity;
      const spec = {
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(timings.leaseDurationMs / 1000),
        acquireTime: keepAcquireTime ? lease?.spec?.acquireTime : now,
        renewTime: now,
        leaseTransitions: step.kind === 'take' ? step.transitions : 0,
      };
      const written =
        step.kind === 'create'
          ? await this.call(
              this.api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec } }),
              'create',
            )
          : await this.call(
              this.api.replaceNamespacedLease({
                name,
                namespace,
                body: { ...lease, spec: { ...lease?.spec, ...spec } },
              }),
              'update',
            );
      this.observed = nextLeaseStep({ lease: written.spec, previous: undefined, identity, nowMs }).observed;
      return true;
    } catch (err) {
      // Another replica wrote first: it holds the Lease now, and the next read shows it.
      if (isConflict(err) || isAlreadyExists(err)) return false;
      log.warn({ err: describeApiError(err), lease: this.leaseName() }, 'leader lease attempt failed');
      return false;
    }
  }

  private call<T>(promise: Promise<T>, what: string): Promise<T> {
    // A hung request must not outlast the renew deadline: the holder has to know it failed.
    return withTimeout(promise, this.options.timings.renewDeadlineMs, `${what} of Lease ${this.leaseName()}`);
  }

  private leaseName(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
