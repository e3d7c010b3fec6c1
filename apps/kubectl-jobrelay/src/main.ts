#!/usr/bin/env node
// The plugin process: kubectl runs `kubectl-jobrelay` (bin/kubectl-jobrelay.js) for `kubectl jobrelay`.
import { runPlugin } from './run-plugin.ts';

process.exitCode = await runPlugin(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
