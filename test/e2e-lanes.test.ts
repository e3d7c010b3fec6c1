// Every e2e file runs in exactly one lane (e2e/lanes.ts): a file in none would never run under
// `npm test`, a file in two would run twice, on two fleets at once.
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exclusiveLane, laneFiles, sharedLanes } from '../e2e/lanes.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('the e2e lanes', () => {
  it('hold every e2e file exactly once', () => {
    const onDisk = readdirSync(join(root, 'e2e/test'))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `e2e/test/${name}`)
      .sort();
    const inLanes = Object.values(laneFiles()).flat();
    expect([...inLanes].sort()).toEqual(onDisk);
    expect(new Set(inLanes).size).toBe(inLanes.length);
  });

  it('are none of them empty', () => {
    for (const files of [...Object.values(sharedLanes), exclusiveLane])
      expect(files.length).toBeGreaterThan(0);
  });

  it('run the short chaos run last on a lane after its control run, not on the first lane', () => {
    const lanes = Object.values(sharedLanes) as readonly (readonly string[])[];
    const withChaos = lanes.findIndex((files) => files.includes('chaos'));
    expect(withChaos).toBeGreaterThan(0);
    const files = lanes[withChaos]!;
    expect(files.at(-1)).toBe('chaos');
    expect(files).toContain('chaos-control');
  });
});
