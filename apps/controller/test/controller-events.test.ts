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
