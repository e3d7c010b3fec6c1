import { type KubeConfig, type KubernetesObject, Watch } from '@kubernetes/client-node';

export interface ResumingWatch {
  /** Ends it for good. */
  stop(): void;
  /** How often it resumed and whether it could not, for a timeout's message. */
  describe(): string;
}

/**
 * A test's watch that resumes from the last version it saw whenever it ends, so a test that
 * waits on it sees every change: client-node ends a watch after 30 s without a byte (a quiet
 * namespace while a slow fleet catches up), and the apiserver closes one whose reader falls
 * behind (a starved test process on a loaded machine). A version too old to resume from (410)
 * starts over from what is there now. Bookmarks move the version on and are not passed on.
 */
export async function resumingWatch<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  path: string,
  options: {
    query?: Record<string, string>;
    /** Where to start (e.g. a list's version); none: what is there now, then changes. */
    resourceVersion?: string;
    onEvent: (type: string, object: T) => void;
  },
): Promise<ResumingWatch> {
  const aborts: AbortController[] = [];
  let stopped = false;
  let resumes = 0;
  let failure: string | undefined;
  let last = options.resourceVersion;
  const follow = async (): Promise<void> => {
    const abort = await new Watch(kubeConfig).watch(
      path,
      { ...options.query, resourceVersion: last, allowWatchBookmarks: true },
      (type: string, object: T) => {
        if (type === 'ERROR') {
          last = undefined;
          return;
        }
        if (object.metadata?.resourceVersion) last = object.metadata.resourceVersion;
        if (type !== 'BOOKMARK') options.onEvent(type, object);
      },
      () => {
        if (stopped) return;
        resumes += 1;
        // A moment's pause, so a refused connection does not spin.
        setTimeout(() => {
          follow().catch((err: unknown) => {
            failure = String(err);
          });
        }, 200);
      },
    );
    aborts.push(abort);
    if (stopped) abort.abort();
  };
  await follow();
  return {
    stop() {
      stopped = true;
      for (const abort of aborts) abort.abort();
    },
    describe: () =>
      `the watch of ${path} resumed ${resumes} times${failure ? `, then could not: ${failure}` : ''}`,
  };
}
