#!/usr/bin/env node
import { chooseKinds, dispatchableKinds, knownKinds } from '@jobrelay/kinds';
// The controller process: `npm run controller -- --kubeconfig <file> [--flag value ...]`.
import { defaultOriginId, logRedaction } from '@jobrelay/kube';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ConfigError, controllerUsage, loadControllerConfig } from './controller-config.ts';
import { DispatchController } from './dispatch-controller.ts';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${controllerUsage}\n`);
    return;
  }
  const config = loadControllerConfig(process.argv.slice(2), process.env);
  const choices = chooseKinds(config, knownKinds(config));
  const log = pino({
    name: 'jobrelay-controller',
    level: config.logLevel,
    redact: logRedaction,
  });
  const management = new KubeConfig();
  if (config.kubeconfig) management.loadFromFile(config.kubeconfig);
  else management.loadFromDefault();
  const originId = config.originId ?? (await defaultOriginId(management));
  const kinds = await dispatchableKinds(choices, management, log);
  const controller = new DispatchController({ config, management, originId, kinds, log });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    controller
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'unclean stop');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await controller.start();
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n\n${controllerUsage}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `jobrelay-controller failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
