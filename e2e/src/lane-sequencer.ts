import { resolve } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { laneFiles } from '../lanes.ts';

const root = resolve(import.meta.dirname, '../..');

/**
 * A lane's files run in the order e2e/lanes.ts lists them, not vitest's (its own cache of
 * durations, else file size, which a fresh clone orders differently from a developer's checkout):
 * the lanes are balanced for that order (longest first, short files filling each lane's end),
 * and the short chaos run comes last on its lane, after the control run it reuses and with no
 * file after it on the fleet it faulted. Files of no lane keep vitest's order.
 */
export class LaneOrderSequencer extends BaseSequencer {
  private readonly rank = new Map(
    Object.values(laneFiles()).flatMap((files) =>
      files.map((file, index) => [resolve(root, file), index] as const),
    ),
  );

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    // Stable: files of no lane (rank -1) keep vitest's order among themselves.
    return ordered.sort((a, b) => (this.rank.get(a.moduleId) ?? -1) - (this.rank.get(b.moduleId) ?? -1));
  }
}
