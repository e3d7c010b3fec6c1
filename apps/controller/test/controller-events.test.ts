// The controller's event hub and the parts' declarations: a part's `watches` must be exactly
// what it subscribes to (else the controller refuses to start), and every event reaches the
// parts in the order they were subscribed.
import { describe, expect, it } from 'vitest';
import {
  type ControllerEvent,
  ControllerEvents,
  type ControllerPart,
  controllerEvents,
  subscribeParts,
} from '../src/controller-events.ts';

function part(
  name: string,
  watches: ControllerEvent[],
  subscribes: ControllerEvent[],
  seen: string[],
): ControllerPart {
  return {
    name,
    watches,
    writes: [`${name}'s objects`],
    subscribe: (events) => {
      for (const event of subscribes) events.on(event, () => seen.push(`${name}:${event}`));
    },
  };
}

describe('subscribeParts', () => {
  it('subscribes every part to what it declares, and an event reaches them in order', () => {
    const hub = new ControllerEvents();
    const seen: string[] = [];
    const described = subscribeParts(hub, [
      part('placement', ['workerCapacity', 'queueRules'], ['workerCapacity', 'queueRules'], seen),
      part('admission', ['workerCapacity'], ['workerCapacity'], seen),
    ]);
    hub.emit('workerCapacity');
    hub.emit('queueRules');
    hub.emit('workerAvailability');
    expect(seen).toEqual(['placement:workerCapacity', 'admission:workerCapacity', 'placement:queueRules']);
    expect(described).toEqual([
      { name: 'placement', watches: ['workerCapacity', 'queueRules'], writes: ["placement's objects"] },
      { name: 'admission', watches: ['workerCapacity'], writes: ["admission's objects"] },
    ]);
  });

  it('refuses a part that subscribes to an event it does not declare', () => {
    const hub = new ControllerEvents();
    expect(() =>
      subscribeParts(hub, [part('resync', ['workerAvailability'], ['workerAvailability', 'origin'], [])]),
    ).toThrow(
      /controller part "resync" declares it watches \[workerAvailability\] but subscribes to \[workerAvailability, origin\]/,
    );
  });

  it('refuses a part that declares an event it never subscribes to', () => {
    const hub = new ControllerEvents();
    expect(() =>
      subscribeParts(hub, [
        part('labels', ['managementNamespace', 'workerNamespace'], ['workerNamespace'], []),
      ]),
    ).toThrow(
      /"labels" declares it watches \[managementNamespace, workerNamespace\] but subscribes to \[workerNamespace\]/,
    );
  });

  it('a derived event reaches its watchers within the event it derives from, before the parts after its emitter', () => {
    const hub = new ControllerEvents();
    const seen: string[] = [];
    const index: ControllerPart = {
      name: 'index',
      watches: ['workerCapacity'],
      emits: ['claimedOrigin'],
      writes: [],
      subscribe: (events) =>
        events.on('workerCapacity', () => {
          seen.push('index:workerCapacity');
          events.emit('claimedOrigin', { type: 'delete', kind: undefined as never, uid: 'u', object: {} });
        }),
    };
    const described = subscribeParts(hub, [
      index,
      part('placement', ['claimedOrigin'], ['claimedOrigin'], seen),
      part('admission', ['claimedOrigin'], ['claimedOrigin'], seen),
      part('reconcile', ['workerCapacity'], ['workerCapacity'], seen),
    ]);
    hub.emit('workerCapacity');
    expect(seen).toEqual([
      'index:workerCapacity',
      'placement:claimedOrigin',
      'admission:claimedOrigin',
      'reconcile:workerCapacity',
    ]);
    expect(described[0]).toEqual({
      name: 'index',
      watches: ['workerCapacity'],
      emits: ['claimedOrigin'],
      writes: [],
    });
  });

  it('refuses a part that watches a derived event no part before it emits', () => {
    const hub = new ControllerEvents();
    const index: ControllerPart = {
      name: 'index',
      watches: [],
      emits: ['claimedOrigin'],
      writes: [],
      subscribe: () => {},
    };
    expect(() =>
      subscribeParts(hub, [part('placement', ['claimedOrigin'], ['claimedOrigin'], []), index]),
    ).toThrow(/"placement" watches \[claimedOrigin\], which no part before it emits/);
  });

  it('refuses a part that emits what it does not declare, or declares it emits what a cache emits', () => {
    const hub = new ControllerEvents();
    let emit: (() => void) | undefined;
    subscribeParts(hub, [
      {
        name: 'index',
        watches: [],
        writes: [],
        subscribe: (events) => {
          emit = () =>
            events.emit('claimedOrigin', { type: 'delete', kind: undefined as never, uid: 'u', object: {} });
        },
      },
    ]);
    expect(() => emit!()).toThrow(/"index" emits "claimedOrigin", which it does not declare/);
    expect(() =>
      subscribeParts(hub, [
        { name: 'fake cache', watches: [], emits: ['origin'], writes: [], subscribe: () => {} },
      ]),
    ).toThrow(/"fake cache" declares it emits \[origin\]: only the caches emit those/);
  });

  it('passes each event its arguments', () => {
    const hub = new ControllerEvents();
    const got: unknown[] = [];
    subscribeParts(hub, [
      {
        name: 'labels',
        watches: ['workerNamespace'],
        writes: [],
        subscribe: (events) => events.on('workerNamespace', (cluster, name) => got.push([cluster, name])),
      },
    ]);
    hub.emit('workerNamespace', 'worker-1', 'team-a');
    expect(got).toEqual([['worker-1', 'team-a']]);
    expect(controllerEvents.map((event) => hub.listenerCount(event))).toEqual(
      controllerEvents.map((event) => (event === 'workerNamespace' ? 1 : 0)),
    );
  });
});
