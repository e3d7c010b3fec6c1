// The Dockerfiles and docker-compose.yml, checked without a container engine (none runs here):
// each Dockerfile is dry-run step by step (dockerfile-dry-run.ts: COPY from the repository,
// RUN its `npm ci` for real against the npm registry, then the image's ENTRYPOINT with --help,
// which loads every module the process imports), and the compose file's services, builds and
// settings are checked against the files and the processes' own configuration loaders.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadApiConfig } from '@jobrelay/api';
import { loadControllerConfig } from '@jobrelay/controller/config';
import { dryRunDockerfile, repositoryRoot } from '@jobrelay/sandbox';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const images = [
  { app: 'controller', usage: 'usage: jobrelay-controller' },
  { app: 'api', usage: 'usage: jobrelay-api' },
];

/** The @jobrelay workspaces an app needs at run time: its dependencies, and theirs. */
function workspaceClosure(app: string): string[] {
  const dirs = new Map<string, string>();
  for (const group of ['apps', 'packages'])
    for (const name of [
      'admission',
      'api',
      'api-types',
      'controller',
      'dashboard',
      'kubectl-jobrelay',
      'bench',
      'clusters',
      'kinds',
      'kube',
      'mirror',
      'placement',
      'planner',
      'resources',
      'sandbox',
    ]) {
      const manifest = join(repositoryRoot, group, name, 'package.json');
      if (existsSync(manifest)) dirs.set(JSON.parse(readFileSync(manifest, 'utf8')).name, `${group}/${name}`);
    }
  const seen = new Set<string>();
  const visit = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, dir, 'package.json'), 'utf8'));
    for (const dependency of Object.keys(manifest.dependencies ?? {}))
      if (dirs.has(dependency)) visit(dirs.get(dependency)!);
  };
  visit(`apps/${app}`);
  return [...seen].sort();
}

describe.each(images)('apps/$app/Dockerfile', ({ app, usage }) => {
  const dockerfile = join(repositoryRoot, 'apps', app, 'Dockerfile');

  it('copies exactly the workspaces the app needs, in both stages', () => {
    const text = readFileSync(dockerfile, 'utf8');
    const manifests = [...text.matchAll(/^COPY ((?:apps|packages)\/[\w-]+)\/package\.json /gm)]
      .map((m) => m[1]!)
      .sort();
    const sources = [...text.matchAll(/^COPY ((?:apps|packages)\/[\w-]+) \.\/\1$/gm)]
      .map((m) => m[1]!)
      .sort();
    const needed = workspaceClosure(app);
    expect(manifests, 'package.json files copied for npm ci').toEqual(needed);
    expect(sources, 'sources copied into the image').toEqual(needed);
  });

  it('builds without an engine: npm ci of production dependencies, then the entrypoint starts', {
    // npm ci for real and then the entrypoint (up to 180 s of its own), beside the e2e lanes.
    timeout: 480_000,
  }, () => {
    const result = dryRunDockerfile(dockerfile, repositoryRoot, {
      runEnv: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
        HOME: process.env.HOME,
        // The registry is still asked for what the cache lacks; the packages are the lockfile's either way.
        npm_config_prefer_offline: 'true',
        // A machine behind a TLS-inspecting proxy trusts its CA this way; npm must too, for what the cache lacks.
        ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
      },
      entrypointArgs: ['--help'],
    });
    expect(result.stages.length, 'stages: dependencies apart from the image').toBeGreaterThanOrEqual(2);
    for (const stage of result.stages) expect(stage.image).toMatch(/^node:24-[a-z]+-slim$/);
    expect(result.stages[result.stages.length - 1]!.user, 'the image runs as').toBe('node');
    expect(readFileSync(dockerfile, 'utf8')).toMatch(/npm ci --omit=dev/);
    expect(
      result.entrypoint.code,
      `${result.entrypoint.argv.join(' ')} --help:\n${result.entrypoint.stderr}`,
    ).toBe(0);
    expect(result.entrypoint.stdout).toContain(usage);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(repositoryRoot, 'docker-compose.yml'), 'utf8')) as {
    services: Record<
      string,
      {
        image?: string;
        build?: { context: string; dockerfile: string };
        environment?: Record<string, string>;
        depends_on?: Record<string, { condition: string }>;
        volumes?: string[];
        ports?: string[];
      }
    >;
  };

  it('builds each app from its Dockerfile and waits for a healthy Redis', () => {
    for (const app of ['controller', 'api']) {
      const service = compose.services[app]!;
      expect(existsSync(join(repositoryRoot, service.build!.context, service.build!.dockerfile))).toBe(true);
      expect(service.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
    }
    expect(compose.services.redis?.image).toMatch(/^redis:\d/);
  });

  it('gives each app settings its own configuration loader accepts, and the kubeconfig it names', () => {
    const controller = loadControllerConfig([], compose.services.controller!.environment!);
    expect(controller).toMatchObject({
      redisUrl: 'redis://redis:6379',
      kubeconfig: '/etc/jobrelay/kubeconfig',
    });
    const api = loadApiConfig([], compose.services.api!.environment!);
    expect(api).toMatchObject({ redisUrl: 'redis://redis:6379', kubeconfig: '/etc/jobrelay/kubeconfig' });
    for (const app of ['controller', 'api'])
      expect(compose.services[app]!.volumes!.some((v) => /:\/etc\/jobrelay\/kubeconfig(:ro)?$/.test(v))).toBe(
        true,
      );
  });

  it('publishes the API on the host’s loopback only', () => {
    expect(compose.services.api!.ports).toEqual(['127.0.0.1:8090:8090']);
  });
});
