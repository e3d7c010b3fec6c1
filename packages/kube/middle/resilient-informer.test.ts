import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  failedWatchesBeforeRelist,
  type InformerEvent,
  informerRelists,
  type ListPage,
  ResilientInformer,
} from '../src/resilient-informer.ts';

interface Thing {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion: string };
}

type WatchEnd =
  | { kind: 'end' }
  | { kind: 'error'; err: Error }
  | { kind: 'status'; status: object }
  /** The apiserver refuses the watch request itself (a 403 once a permission is taken away). */
  | { kind: 'refused'; statusCode: number };

/**
 * One scripted watch session: what it sends, then how it ends. The apiserver's side of the
 * client boundary, answered in process: each watch request takes the next session.
 */
interface Session {
  events: Array<{ phase: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: Thing }>;
  end: WatchEnd;
}

const thing = (name: string, resourceVersion: string): Thing => ({
  metadata: { name, namespace: 'ns', resourceVersion },
});
const bookmark = (resourceVersion: string): Session['events'][number] => ({
  phase: 'BOOKMARK',
  object: { metadata: { name: '', resourceVersion } },
});

function scripted(options: { lists: Array<ListPage<Thing>>; sessions: Session[] }) {
  const listed: Array<Record<string, unknown>> = [];
  const watchedFrom: Array<string | undefined> = [];
  /** `informer.watching` as each watch request is made. */
  const watchingAtRequest: boolean[] = [];
  const events: Array<InformerEvent<Thing>> = [];
  let settle: () => void = () => {};
  const exhausted = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const name = `things-${Math.random().toString(36).slice(2)}`;
  const informer = new ResilientInformer<Thing>({
    name,
    kubeConfig: new KubeConfig(),
    apiVersion: 'example.dev/v1',
    kind: 'Thing',
    path: '/apis/example.dev/v1/things',
    log: pino({ level: 'silent' }),
    initialBackoffMs: 1,
    onEvent: (event) => events.push(event),
    listPage: async (_path, query) => {
      listed.push(query);
      const page = options.lists.shift();
      if (!page) throw new Error('no more lists scripted');
      return structuredClone(page);
    },
    watchFactory: () => ({
      watch: async (_path, query, onEvent, onDone) => {
        const controller = new AbortController();
        watchedFrom.push(query.resourceVersion as string | undefined);
        watchingAtRequest.push(informer.watching);
        const session = options.sessions.shift();
        if (session?.end.kind === 'refused')
          throw Object.assign(new Error(`HTTP ${session.end.statusCode}`), {
            statusCode: session.end.statusCode,
          });
        if (!session) {
          // Nothing more scripted: the watch stays open until the informer stops.
          settle();
          controller.signal.addEventListener('abort', () => {
            const aborted = new Error('aborted');
            aborted.name = 'AbortError';
            onDone(aborted);
          });
          return controller;
        }
        queueMicrotask(() => {
          for (const { phase, object } of session.events) onEvent(phase, structuredClone(object), {});
          if (session.end.kind === 'status') onEvent('ERROR', session.end.status, {});
          onDone(session.end.kind === 'error' ? session.end.err : null);
        });
        return controller;
      },
    }),
  });
  const tally = () =>
    Object.fromEntries(
      informerRelists()
        .filter((t) => t.informer === name)
        .map((t) => [t.reason, t.count]),
    );
  return { informer, listed, watchedFrom, watchingAtRequest, events, exhausted, tally };
}

const ended: WatchEnd = { kind: 'end' };

describe('ResilientInformer against a scripted apiserver', () => {
  it('lists once, then resumes each watch from the last version seen (bookmarks too): no relist, no replay', async () => {
    const s = scripted({
      lists: [{ metadata: { resourceVersion: '10' }, items: [thing('a', '5'), thing('b', '9')] }],
      sessions: [
        { events: [{ phase: 'MODIFIED', object: thing('a', '11') }], end: ended },
        { events: [bookmark('15')], end: ended },
        { events: [], end: ended },
        { events: [{ phase: 'ADDED', object: thing('c', '20') }, bookmark('22')], end: ended },
      ],
    });
    s.informer.start();
    await s.exhausted;
    await s.informer.stop();
    expect(s.listed).toHaveLength(1);
    // Each watch from where the last one left off; the quiet one (no event) from the bookmark.
    expect(s.watchedFrom).toEqual(['10', '11', '15', '15', '22']);
    expect(s.informer.list().map((t) => t.metadata.resourceVersion)).toEqual(['11', '9', '20']);
    expect(s.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'upsert a',
      'upsert b',
      'upsert a',
      'upsert c',
    ]);
    expect(s.tally()).toEqual({ initial: 1 });
  });

  it('relists when its version expired (410), reporting what changed meanwhile', async () => {
    const s = scripted({
      lists: [
        { metadata: { resourceVersion: '10' }, items: [thing('a', '5'), thing('b', '9')] },
        // b deleted and a changed while the watch was gone.
        { metadata: { resourceVersion: '40' }, items: [thing('a', '30')] },
      ],
      sessions: [
        { events: [], end: { kind: 'status', status: { kind: 'Status', code: 410, reason: 'Expired' } } },
      ],
    });
    s.informer.start();
    await s.exhausted;
    await s.informer.stop();
    expect(s.listed).toHaveLength(2);
    expect(s.watchedFrom).toEqual(['10', '40']);
    expect(s.events.slice(2).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'upsert a',
      'delete b',
    ]);
    expect(s.tally()).toEqual({ initial: 1, expired: 1 });
  });

  it('relists when its version is newer than the apiserver has (an etcd restored)', async () => {
    const tooLarge = {
      kind: 'Status',
      code: 504,
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
    };
    const s = scripted({
      lists: [
        { metadata: { resourceVersion: '10' }, items: [] },
        { metadata: { resourceVersion: '3' }, items: [] },
      ],
      sessions: [{ events: [], end: { kind: 'status', status: tooLarge } }],
    });
    s.informer.start();
    await s.exhausted;
    await s.informer.stop();
    expect(s.watchedFrom).toEqual(['10', '3']);
    expect(s.tally()).toEqual({ initial: 1, expired: 1 });
  });

  it('a failed watch resumes from the same version; only one that keeps failing lists afresh', async () => {
    const failure = (): Session => ({
      events: [],
      end: { kind: 'error', err: new Error('connection reset') },
    });
    const s = scripted({
      lists: [
        { metadata: { resourceVersion: '10' }, items: [thing('a', '5')] },
        { metadata: { resourceVersion: '50' }, items: [thing('a', '5')] },
      ],
      sessions: [
        // A few failures, then a watch that works: no list.
        failure(),
        failure(),
        { events: [bookmark('12')], end: ended },
        // Then failures in a row, one fewer than the limit each time it works again...
        ...Array.from({ length: failedWatchesBeforeRelist - 1 }, failure),
        { events: [], end: ended },
        // ...and then as many as the limit: it lists afresh.
        ...Array.from({ length: failedWatchesBeforeRelist }, failure),
      ],
    });
    s.informer.start();
    await s.exhausted;
    await s.informer.stop();
    expect(s.listed).toHaveLength(2);
    expect(s.watchedFrom).toEqual([
      '10',
      '10',
      '10',
      ...Array.from({ length: failedWatchesBeforeRelist }, () => '12'),
      ...Array.from({ length: failedWatchesBeforeRelist }, () => '12'),
      '50',
    ]);
    expect(s.tally()).toEqual({ initial: 1, unresumable: 1 });
    // Nothing changed in between: the relist reports nothing.
    expect(s.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['upsert a']);
  });

  it('says it is watching only while its last watch was accepted: a refused one clears it until one is', async () => {
    const s = scripted({
      lists: [{ metadata: { resourceVersion: '10' }, items: [] }],
      sessions: [
        { events: [], end: ended },
        { events: [], end: { kind: 'refused', statusCode: 403 } },
      ],
    });
    expect(s.informer.watching).toBe(false);
    s.informer.start();
    await s.exhausted;
    // Listed and accepted; accepted again; then refused: not watching until the next is accepted.
    expect(s.watchingAtRequest).toEqual([true, true, false]);
    // The last request was made; its acceptance lands a tick later.
    await new Promise((r) => setTimeout(r, 0));
    expect(s.informer.watching).toBe(true);
    await s.informer.stop();
    expect(s.informer.watching).toBe(false);
    expect(s.listed).toHaveLength(1);
  });
});
