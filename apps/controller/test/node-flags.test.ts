import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controllerEnvironment, controllerNodeFlags } from '../src/node-flags.ts';

const root = join(import.meta.dirname, '../../..');

describe('the V8 flags and malloc settings the controller runs with', () => {
  it("are the image's ENTRYPOINT flags", () => {
    const dockerfile = readFileSync(join(root, 'apps/controller/Dockerfile'), 'utf8');
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    expect(entrypoint).toEqual(['node', ...controllerNodeFlags, 'apps/controller/src/main.ts']);
    const env = Object.fromEntries([...dockerfile.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    expect(env).toMatchObject(controllerEnvironment);
  });

  it("are `npm run controller`'s", () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<
      string,
      string
    >;
    expect(scripts.controller).toBe(
      `${Object.entries(controllerEnvironment)
        .map(([name, value]) => `${name}=${value} `)
        .join(
          '',
        )}bash scripts/with-node.sh scripts/run-node.sh ${controllerNodeFlags.join(' ')} apps/controller/src/main.ts`,
    );
  });
});
