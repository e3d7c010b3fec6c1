#!/usr/bin/env node
// The controller process: `npm run controller -- --kubeconfig <file> [--flag value ...]`.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { chooseKinds, dispatchableKinds, knownKinds } from '@jobrelay/kinds';
import { defaultOriginId, logRedaction, printableConfig } from '@jobrelay/kube';
import { loadRecordKeyring, recordKeySecretName } from '@jobrelay/placement';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ConfigError, controllerUsage, loadControllerConfig } from './controller-config.ts';
import { DispatchController } from './dispatch-controller.ts';
import { MemoryAfterBursts } from './memory-after-bursts.ts';

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
  // What it runs with, first thing: an operator's first question when it misbehaves.
  log.info({ configuration: printableConfig(config) }, 'configuration');
  const management = new KubeConfig();
  if (config.kubeconfig) management.loadFromFile(config.kubeconfig);
  else management.loadFromDefault();
  const originId = config.originId ?? (await defaultOriginId(management));
  const kinds = await dispatchableKinds(choices, management, log);
  // The keys placement records are sealed with: made once per installation, by whichever
  // replica starts first. Without them no record could be trusted, so failing here is fatal.
  const { keyring: recordKeys, created } = await loadRecordKeyring(
    management.makeApiClient(CoreV1Api),
    config.systemNamespace,
    { createIfMissing: true },
  ).catch((err: unknown) => {
    throw new Error(
      `cannot read or create Secret ${config.systemNamespace}/${recordKeySecretName}, which holds the keys placement records are sealed with: ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  log.info(
    { secret: `${config.systemNamespace}/${recordKeySecretName}`, keyId: recordKeys.currentKeyId, created },
    created ? 'created the placement record key' : 'loaded the placement record keys',
  );
  // A pod's name is unique among the replicas and survives a container restart, so a
  // restarted leader takes its Lease back at once; elsewhere, unique per process.
  const identity =
    config.leaderElectionIdentity ??
    process.env.POD_NAME ??
    `${hostname()}_${randomBytes(4).toString('hex')}`;
  const controller = new DispatchController({
    config,
    management,
    originId,
    kinds,
    recordKeys,
    log,
    identity,
    onLostLeadership: () => {
      // Another replica may lead within seconds: exit rather than race it; a restart follows.
      log.fatal('exiting: lost the leader lease');
      process.exit(1);
    },
  });

  const memory = new MemoryAfterBursts({ log });
  memory.start();

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    memory.stop();
    log.info({ signal, timeoutSeconds: config.shutdownTimeoutSeconds }, 'stopping');
    controller
      .stop(config.shutdownTimeoutSeconds * 1000)
      .then((finished) => {
        log.info({ finished }, 'stopped');
        process.exit(finished ? 0 : 1);
      })
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
