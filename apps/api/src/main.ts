#!/usr/bin/env node
// The API process: `npm run api -- --kubeconfig <file> [--flag value ...]`. Only wiring:
// configuration, logger, signals; the app itself is built by buildApi.
import { readFileSync } from 'node:fs';
import { kubeconfigPolicyOf } from '@jobrelay/clusters';
import { defaultOriginId, logRedaction, printableConfig } from '@jobrelay/kube';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { AccessReviewer } from './access-review.ts';
import { apiUsage, ConfigError, loadApiConfig } from './api-config.ts';
import { ApiMetrics } from './api-metrics.ts';
import { buildApi } from './build-api.ts';
import { FleetView } from './fleet-view.ts';
import { chosenKinds, servedKinds } from './workload-kinds.ts';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${apiUsage}\n`);
    return;
  }
  const config = loadApiConfig(process.argv.slice(2), process.env);
  // The controller's kind flags, read by the same code: a bad one is a usage error before anything connects.
  const choices = chosenKinds(config);
  const log = pino({ name: 'jobrelay-api', level: config.logLevel, redact: logRedaction });
  log.info({ configuration: printableConfig(config) }, 'configuration');
  const management = new KubeConfig();
  if (config.kubeconfig) management.loadFromFile(config.kubeconfig);
  else management.loadFromDefault();
  const originId = config.originId ?? (await defaultOriginId(management));
  // Exactly the kinds the controller dispatches here: those the management cluster serves, and
  // not those Kueue's MultiKueue claims.
  const kinds = await servedKinds(choices, management, log);
  const fleet = new FleetView({
    management,
    kinds,
    originId,
    systemNamespace: config.systemNamespace,
    redisUrl: config.redisUrl,
    placementPolicy: config.placementPolicy,
    kubeconfigPolicy: kubeconfigPolicyOf(config),
    log,
  });
  const access = new AccessReviewer({
    kubeConfig: management,
    cacheSeconds: config.authCacheSeconds,
    audiences: config.tokenAudiences,
  });
  const tls = config.tlsCertFile
    ? { cert: readFileSync(config.tlsCertFile, 'utf8'), key: readFileSync(config.tlsKeyFile!, 'utf8') }
    : undefined;
  const metrics = new ApiMetrics();
  metrics.observeWorkerWatches(() => fleet.workerWatchStreams());
  const app = await buildApi({
    fleet,
    access,
    log,
    config: { ...config, originId },
    metrics,
    ...(tls ? { tls } : {}),
  });
  await fleet.start();
  const separator = config.address.lastIndexOf(':');
  const host = config.address.slice(0, separator).replace(/^\[|\]$/g, '');
  const url = await app.listen({ host, port: Number(config.address.slice(separator + 1)) });
  log.info(
    {
      url,
      originId,
      tls: Boolean(tls),
      kinds: Object.fromEntries(kinds.map((k) => [k.adapter.name, k.managedBy])),
    },
    'serving the jobrelay API',
  );

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    Promise.all([app.close(), fleet.stop()])
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'unclean stop');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n\n${apiUsage}\n`);
    process.exit(2);
  }
  process.stderr.write(`jobrelay-api failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
