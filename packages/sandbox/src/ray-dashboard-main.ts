// The simulated Ray dashboard process `sandbox up` starts (process `ray-dashboard`):
//   node ray-dashboard-main.ts --port <port> --sandbox-dir <dir>
// Listens on 127.0.0.1 only. See ray-dashboard.ts for what it answers.
import { parseArgs } from 'node:util';
import { createRayDashboardProxy, SimulatedRayDashboards } from './ray-dashboard.ts';
import { sandboxSubmitterLookup } from './ray-dashboard-lookup.ts';

const { values } = parseArgs({
  options: { port: { type: 'string' }, 'sandbox-dir': { type: 'string' } },
});
const port = Number(values.port);
const sandboxDir = values['sandbox-dir'];
if (!Number.isInteger(port) || port <= 0 || !sandboxDir) {
  process.stderr.write('usage: ray-dashboard-main.ts --port <port> --sandbox-dir <dir>\n');
  process.exit(2);
}

const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
const dashboards = new SimulatedRayDashboards({
  lookupSubmittedJob: sandboxSubmitterLookup(sandboxDir),
  log,
});
const server = createRayDashboardProxy(dashboards);
server.on('error', (err) => {
  log(`error: ${err.message}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => log(`simulated Ray dashboards: proxy on 127.0.0.1:${port}`));
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // operators keep their proxy connections alive
  });
}
