// The web dashboard in a real browser (Debian's Chromium, headless, driven by playwright-core)
// against the real API process, controller and fleet: sign-in refusals, the registered
// clusters, a Job seen running and then finished without a reload, a RayCluster and a RayJob
// beside it (listed, filtered by kind, each with its page), a cluster cordoned from the
// keyboard and drained after confirmation, a jobrelay-viewer without the buttons, the token kept
// for the tab's session only, both screen sizes, and no request leaving loopback nor breaking the
// Content-Security-Policy. Screenshots of every page go to docs/dashboard/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  kuberayManagedBy,
  repositoryRoot,
  sandboxRayCluster,
  sandboxRayJob,
  teamNamespace,
} from '@jobrelay/sandbox';
import { CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from '../src/api-process.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { createRay, deleteRay } from '../src/ray-fixtures.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const workerNames = sandbox.workers.map((w) => w.name);
const target = workerNames[0]!;
const screenshots = join(repositoryRoot, 'docs/dashboard');
const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };
let controller: ControllerProcess;
let api: ApiProcess;
let url: string;
let namespace: string;
let browser: Browser;
let viewerToken: string;
const viewerBinding = uniqueName('dashboard-viewer');
/** Every URL any page asked for, and any Content-Security-Policy violation the browser reported. */
const requested: string[] = [];
const cspViolations: string[] = [];
const contexts: BrowserContext[] = [];

async function openPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  contexts.push(context);
  const page = await context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await page.goto(`${url}/dashboard/`);
  return page;
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Bearer token').fill(token);
  await page.keyboard.press('Enter');
}

async function signedIn(viewport: { width: number; height: number }, token: string): Promise<Page> {
  const page = await openPage(viewport);
  await signIn(page, token);
  await page.locator('nav[aria-label="Dashboard pages"]').waitFor();
  return page;
}

/** Nothing is wider than the window: no sideways scrolling at this size. */
async function expectNoHorizontalOverflow(page: Page, where: string): Promise<void> {
  // Evaluated in the page (this file is type-checked without the DOM's types).
  const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  );
  expect(scrollWidth, `${where}: page ${scrollWidth}px wide in a ${innerWidth}px window`).toBeLessThanOrEqual(
    innerWidth,
  );
}

async function go(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: label }).waitFor();
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  controller = startController(sandbox);
  api = startApiProcess(sandbox);
  url = await api.url();
  namespace = await createTestNamespace(fleet.management, 'dashboard');
  // A caller with deploy/api's jobrelay-viewer ClusterRole: a ServiceAccount's token.
  const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await fleet.management.core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: 'viewer' } },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: viewerBinding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'jobrelay-viewer' },
      subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace }],
    },
  });
  const request = await fleet.management.core.createNamespacedServiceAccountToken({
    name: 'viewer',
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  viewerToken = request.status!.token!;
  browser = await chromium.launch({
    executablePath: process.env.JOBRELAY_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    // As root (CI containers) Chromium refuses to start with its sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  await eventually('the API ready', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.deleteClusterRoleBinding({ name: viewerBinding }).catch(() => {});
  // Its Jobs go with it, even those a failed test left behind.
  if (namespace) await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
  // Other test files expect every worker schedulable.
  for (const name of workerNames)
    await workerClusterAdmin(fleet)
      .reset(name, [])
      .catch(() => {});
  await api?.kill();
  await controller?.kill();
});

describe('the dashboard in Chromium', () => {
  it('refuses a wrong token with the API’s reason, and a token without rights with the permission it lacks', async () => {
    const page = await openPage(desktop);
    await expect(page.title()).resolves.toBe('jobrelay dashboard');
    await signIn(page, 'not-a-token-the-apiserver-knows');
    const error = page.getByRole('alert');
    await error.filter({ hasText: 'The API refused this token' }).waitFor();
    expect(await error.textContent()).toMatch(/TokenReview/);
    // Authenticated, but RBAC grants nothing here: told what is missing, and not signed in.
    await signIn(page, sandbox.token('nobody'));
    await error.filter({ hasText: 'list workerclusters.jobrelay.dev' }).waitFor();
    expect(await error.textContent()).toContain('jobrelay-viewer');
    expect(await page.locator('nav').count()).toBe(0);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
  });

  it('shows the clusters, a Job running then finished without a reload, a RayCluster and a RayJob beside it, every page; cordons from the keyboard, drains after confirmation', async () => {
    const waiting = uniqueName('dash-waits');
    const runs = uniqueName('dash-runs');
    // One Job that fits no cluster (it shows on the pending page), one that runs 6 s on KWOK.
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name: waiting, managedBy: dispatcherManagedBy, requests: { cpu: '5000' } }),
    });
    const page = await signedIn(desktop, sandbox.token('fleet-admin'));
    for (const name of workerNames) await page.locator(`article[data-cluster="${name}"]`).waitFor();
    await page.locator('#live-state.live-live').waitFor();
    await expectNoHorizontalOverflow(page, 'fleet at 1280x800');
    // A marker on the window: gone if the page ever reloads.
    await page.evaluate('window.neverReloaded = true');

    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name: runs,
        managedBy: dispatcherManagedBy,
        pod: { runSeconds: 12 },
        requests: { cpu: '3', memory: '6Gi' },
      }),
    });
    await go(page, 'Workloads');
    const row = page.locator(`tr[data-workload="job/${namespace}/${runs}"]`);
    await row.and(page.locator('[data-phase="running"]')).waitFor({ timeout: 30_000 });
    expect(await row.locator('[data-field="phase"]').textContent()).toBe('Running');
    expect(await row.locator('[data-field="kind"]').textContent()).toBe('job');
    // The fleet while it runs: its cluster counts it, and its pod fills the capacity bars.
    await go(page, 'Fleet');
    await page.locator('[data-field="workloads-placed"]', { hasText: /^1 \(1 job\)$/ }).waitFor();
    await screenshot(page, 'fleet');
    await go(page, 'Workloads');
    await row.and(page.locator('[data-phase="finished"]')).waitFor({ timeout: 60_000 });
    expect(await row.locator('[data-field="phase"]').textContent()).toBe('Finished');

    // Its page: the explanation, the placement story, its Events, its pod's log from the worker.
    await row.getByRole('link', { name: runs }).click();
    await page.getByRole('heading', { name: 'Why this cluster' }).waitFor();
    await page.locator('.explain', { hasText: /placed on worker-\d/ }).waitFor();
    await page.getByRole('region', { name: 'Placement history' }).getByText('Placed').first().waitFor();
    await page.getByText('Complete: True').waitFor();
    await page.locator('[data-field="kind"]', { hasText: 'job (batch/v1 Job)' }).waitFor();
    const logs = page.getByLabel('Pod logs', { exact: true });
    await eventually(
      'the pod log on the Job page',
      async () => {
        if ((await logs.textContent())?.includes('simulated by KWOK')) return true;
        await page.getByRole('button', { name: 'Reload logs' }).click();
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 2_000 },
    );
    await expectNoHorizontalOverflow(page, 'workload page at 1280x800');
    await screenshot(page, 'workload');

    // A RayCluster and a RayJob beside the Jobs: listed with their kind, live, without a reload.
    const rayCluster = uniqueName('dash-rc');
    const rayJob = uniqueName('dash-rj');
    await createRay(
      fleet.management,
      namespace,
      sandboxRayCluster({ name: rayCluster, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    await createRay(
      fleet.management,
      namespace,
      sandboxRayJob({
        name: rayJob,
        runSeconds: 600,
        managedBy: kuberayManagedBy.multiKueue,
        cluster: { workerReplicas: 0 },
      }),
    );
    await go(page, 'Workloads');
    const rayClusterRow = page.locator(`tr[data-workload="raycluster/${namespace}/${rayCluster}"]`);
    const rayJobRow = page.locator(`tr[data-workload="rayjob/${namespace}/${rayJob}"]`);
    await rayClusterRow.and(page.locator('[data-phase="running"]')).waitFor({ timeout: 90_000 });
    await rayJobRow.and(page.locator('[data-phase="running"]')).waitFor({ timeout: 90_000 });
    expect(await rayClusterRow.locator('[data-field="kind"]').textContent()).toBe('raycluster');
    expect(await rayJobRow.locator('[data-field="kind"]').textContent()).toBe('rayjob');
    await expectNoHorizontalOverflow(page, 'workloads at 1280x800');
    await screenshot(page, 'workloads');
    // The kind filter: RayClusters only, then every kind again.
    await page.getByLabel('Kind', { exact: true }).selectOption('raycluster');
    await page.locator('tr[data-kind="job"]').first().waitFor({ state: 'detached' });
    expect(
      await page
        .locator('tr[data-workload]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind'))),
    ).toEqual(expect.arrayContaining(['raycluster']));
    expect(await page.locator('tr[data-workload]:not([data-kind="raycluster"])').count()).toBe(0);
    await page.getByLabel('Kind', { exact: true }).selectOption('');
    await row.waitFor();
    expect(await row.locator('[data-field="phase"]').textContent()).toBe('Finished');
    // Each kind has its page: the RayCluster's says what it is, where it runs and why.
    await rayClusterRow.getByRole('link', { name: rayCluster }).click();
    await page.locator('[data-field="kind"]', { hasText: 'raycluster (ray.io/v1 RayCluster)' }).waitFor();
    await page.locator('.explain', { hasText: /placed on worker-\d/ }).waitFor();
    await page.locator('[data-field="status"]', { hasText: 'ready' }).waitFor();
    await go(page, 'Workloads');
    await rayJobRow.getByRole('link', { name: rayJob }).click();
    await page.locator('[data-field="kind"]', { hasText: 'rayjob (ray.io/v1 RayJob)' }).waitFor();
    await page.locator('[data-field="workload-phase"]', { hasText: 'Running' }).waitFor();
    await go(page, 'Workloads');

    await go(page, 'Pending');
    await page
      .locator('tr', { hasText: waiting })
      .getByText(/insufficient cpu/)
      .waitFor();
    await expectNoHorizontalOverflow(page, 'pending at 1280x800');
    await screenshot(page, 'pending');

    await go(page, 'Charts');
    await page
      .locator('#placements-summary', { hasText: /[1-9]\d* placement\(s\) in the last hour/ })
      .waitFor();
    await page.locator('#latency-summary', { hasText: 'median' }).waitFor();
    await expectNoHorizontalOverflow(page, 'charts at 1280x800');
    await screenshot(page, 'charts');

    // Cordon from the keyboard: Tab to the button, Enter; the WorkerCluster says so.
    await go(page, 'Fleet');
    const cordon = `cordon-${target}`;
    await eventually(
      `Tab reaching the cordon button of ${target}`,
      async () => {
        await page.keyboard.press('Tab');
        return (await page.evaluate<string | undefined>('document.activeElement?.dataset?.key')) === cordon
          ? true
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 0 },
    );
    await page.keyboard.press('Enter');
    await eventually(`${target} cordoned on the management cluster`, async () =>
      (await workerClusterAdmin(fleet).get(target)).spec.unschedulable === true ? true : undefined,
    );
    const card = page.locator(`article[data-cluster="${target}"]`);
    await card.getByText('Cordoned', { exact: true }).waitFor();
    // Focus stays on the same control, now the uncordon button.
    await page.locator(`[data-key="${cordon}"]:focus`, { hasText: 'Uncordon' }).waitFor();
    await expect(page.getByRole('status').textContent()).resolves.toContain(`${target} cordoned`);
    await screenshot(page, 'fleet-cordoned');
    await card.getByRole('button', { name: `Uncordon ${target}` }).click();
    await eventually(`${target} schedulable again`, async () =>
      (await workerClusterAdmin(fleet).get(target)).spec.unschedulable === undefined ? true : undefined,
    );
    // Drain asks first; cancelling changes nothing, confirming sets spec.drain; uncordon ends it.
    await card.getByRole('button', { name: `Drain ${target}…` }).click();
    const confirm = card.getByRole('group', { name: `Confirm draining ${target}` });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await workerClusterAdmin(fleet).get(target)).spec.drain).toBeUndefined();
    await card.getByRole('button', { name: `Drain ${target}…` }).click();
    await confirm.getByRole('button', { name: `Drain ${target}`, exact: true }).click();
    await eventually(`${target} draining on the management cluster`, async () =>
      (await workerClusterAdmin(fleet).get(target)).spec.drain === true ? true : undefined,
    );
    await card.getByText('Draining', { exact: true }).waitFor();
    await card.getByRole('button', { name: `Uncordon ${target}` }).click();
    await eventually(`${target} no longer draining`, async () =>
      (await workerClusterAdmin(fleet).get(target)).spec.drain === undefined ? true : undefined,
    );
    expect(await page.evaluate<boolean | undefined>('window.neverReloaded')).toBe(true);
    await fleet.management.batch.deleteNamespacedJob({
      name: waiting,
      namespace,
      propagationPolicy: 'Background',
    });
    await deleteRay(fleet.management, 'rayjobs', namespace, rayJob);
    await deleteRay(fleet.management, 'rayclusters', namespace, rayCluster);
  });

  it('shows a jobrelay-viewer the fleet without cordon or drain buttons (the API refuses them the cordon); the token lasts the tab session', async () => {
    const page = await signedIn(desktop, viewerToken);
    const card = page.locator(`article[data-cluster="${target}"]`);
    await card.waitFor();
    await card.getByText('Read-only for you').waitFor();
    expect(await page.getByRole('button', { name: /cordon|drain/i }).count()).toBe(0);
    const refused = await fetch(`${url}/api/v1/clusters/${target}/cordon`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewerToken}` },
    });
    expect(refused.status).toBe(403);
    // The token lives for this tab's session: a reload keeps it, another browser context has none.
    await page.reload();
    await page.locator(`article[data-cluster="${target}"]`).waitFor();
    const elsewhere = await openPage(desktop);
    await elsewhere.getByLabel('Bearer token').waitFor();
    expect(await elsewhere.locator('nav').count()).toBe(0);
  });

  it('signs in a caller whose rights stop at one namespace to that namespace: its workloads live, no others', async () => {
    const page = await openPage(desktop);
    const error = page.getByRole('alert');
    // Across every namespace team-a may read nothing: told so, and where to say its namespace.
    await signIn(page, sandbox.token('team-a'));
    await error.filter({ hasText: 'enter it under Namespace' }).waitFor();
    await page.getByLabel('Namespace (optional)').fill('Team_A');
    await page.getByLabel('Bearer token').press('Enter');
    await error.filter({ hasText: 'is not a namespace name' }).waitFor();
    expect(await page.locator('nav').count()).toBe(0);

    const mine = uniqueName('dash-team');
    const elsewhere = uniqueName('dash-other');
    for (const [where, name] of [
      [teamNamespace, mine],
      [namespace, elsewhere],
    ] as const)
      await fleet.management.batch.createNamespacedJob({
        namespace: where,
        body: sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 5 } }),
      });
    try {
      await page.getByLabel('Namespace (optional)').fill(teamNamespace);
      await page.getByLabel('Bearer token').press('Enter');
      await page.locator('nav[aria-label="Dashboard pages"]').waitFor();
      await page.locator('header .scope', { hasText: `in ${teamNamespace}` }).waitFor();
      await go(page, 'Workloads');
      const row = page.locator(`tr[data-workload="job/${teamNamespace}/${mine}"]`);
      // Live through the namespace's watch: running, then finished, without a reload.
      await row.and(page.locator('[data-phase="finished"]')).waitFor({ timeout: 60_000 });
      await page.locator('#live-state.live-live').waitFor();
      expect(
        await page
          .locator('tr[data-workload]')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-workload'))),
      ).toEqual(expect.not.arrayContaining([`job/${namespace}/${elsewhere}`]));
      expect(await page.locator(`tr[data-workload*="/${namespace}/"]`).count()).toBe(0);
      // The namespace is kept with the token for the tab's session.
      await page.reload();
      await page.locator('header .scope', { hasText: `in ${teamNamespace}` }).waitFor();
    } finally {
      await fleet.management.batch
        .deleteNamespacedJob({ name: mine, namespace: teamNamespace, propagationPolicy: 'Background' })
        .catch(() => {});
    }
  });

  it('shows the Queues page: usage against nominal and the borrowing limit, counts, share over time; a queue’s page lists its workloads in order and why', async () => {
    // Two DispatchQueues of one cohort (the real CRD, status written by the real controller):
    // `lender` lends its idle 2 cpu, `borrower` holds its 1 cpu and borrows 1 more.
    const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
    const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };
    const borrowerNamespace = await createTestNamespace(fleet.management, 'dash-queue');
    const lenderNamespace = await createTestNamespace(fleet.management, 'dash-lend');
    const borrower = uniqueName('research');
    const lender = uniqueName('team-b');
    const queueOf = (name: string, selected: string, cpu: string, extra: Record<string, string> = {}) => ({
      ...queueApi,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'DispatchQueue',
        metadata: { name },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': selected } },
          cohort: 'e2e-lab',
          resources: [
            { name: 'cpu', nominalQuota: cpu, ...extra },
            { name: 'memory', nominalQuota: '4Gi' },
          ],
        },
      },
    });
    await custom.createClusterCustomObject(
      queueOf(borrower, borrowerNamespace, '1', { borrowingLimit: '1' }),
    );
    await custom.createClusterCustomObject(queueOf(lender, lenderNamespace, '2'));
    const names = [0, 1, 2, 3, 4].map((i) => uniqueName(`train-${i}`));
    try {
      for (const name of names)
        await fleet.management.batch.createNamespacedJob({
          namespace: borrowerNamespace,
          body: sandboxJob({
            name,
            managedBy: dispatcherManagedBy,
            requests: { cpu: '500m', memory: '512Mi' },
            pod: { runSeconds: 180 },
          }),
        });
      const page = await signedIn(desktop, sandbox.token('fleet-admin'));
      await go(page, 'Queues');
      const card = page.locator(`article[data-queue="${borrower}"]`);
      // Four admitted (1 cpu nominal + 1 borrowed), one waits: the page's polls show it.
      await card.locator('[data-field="admitted"]', { hasText: /^4$/ }).waitFor({ timeout: 90_000 });
      await card.locator('[data-field="pending"]', { hasText: /^1$/ }).waitFor({ timeout: 60_000 });
      const cpuBar = card.locator('[data-resource="cpu"] svg');
      await expect(cpuBar.getAttribute('aria-label')).resolves.toBe(
        'CPU: 2 used of 1 nominal, 1 borrowed; may borrow 1',
      );
      await card.getByText('cohort e2e-lab').waitFor();
      await page
        .locator(`article[data-queue="${lender}"] [data-field="admitted"]`, { hasText: /^0$/ })
        .waitFor();
      // The share chart fills from the page's own polls (every 10 s). A steady share is a flat
      // line, which has no height: attached, not "visible", is what to wait for.
      await card.locator('path.spark-line').waitFor({ state: 'attached', timeout: 60_000 });
      expect(await card.locator('path.spark-line').getAttribute('d')).toMatch(
        /^M[\d.]+ [\d.]+(L[\d.]+ [\d.]+)+$/,
      );
      expect(Number(await card.locator('[data-field="share"]').textContent())).toBeGreaterThan(0);
      await expectNoHorizontalOverflow(page, 'queues at 1280x800');
      await screenshot(page, 'queues');

      // A queue's page: the pending workload with the controller's reason, the admitted ones.
      await card.getByRole('link', { name: borrower }).click();
      await page.getByRole('heading', { level: 1, name: `Queue ${borrower}` }).waitFor();
      const pendingRow = page.getByRole('region', { name: `Pending in ${borrower}` }).locator('tbody tr');
      await pendingRow.first().getByText(`queue ${borrower}: cpu`).waitFor();
      expect(await pendingRow.count()).toBe(1);
      expect(await pendingRow.first().locator('td').first().textContent()).toBe('1');
      const admittedRows = page.getByRole('region', { name: `Admitted in ${borrower}` }).locator('tbody tr');
      await expect(admittedRows.count()).resolves.toBe(4);
      await expect(page.locator('nav a[aria-current="page"]').textContent()).resolves.toBe('Queues');

      // The Pending page names the waiting workload's queue and place, linked to its page.
      await go(page, 'Pending');
      await page
        .locator('tr', { hasText: `${borrowerNamespace}/` })
        .getByRole('link', { name: `${borrower} (1 of 1)` })
        .waitFor();

      // A jobrelay-viewer reads the queues too.
      const viewer = await signedIn(desktop, viewerToken);
      await go(viewer, 'Queues');
      await viewer.locator(`article[data-queue="${borrower}"] [data-field="admitted"]`).waitFor();
    } finally {
      for (const name of [borrower, lender])
        await custom.deleteClusterCustomObject({ ...queueApi, name }).catch(() => {});
      for (const name of [borrowerNamespace, lenderNamespace])
        await fleet.management.core.deleteNamespace({ name }).catch(() => {});
    }
  }, 240_000);

  it('works at phone width: one column, no sideways scrolling on any page', async () => {
    const page = await signedIn(phone, sandbox.token('fleet-admin'));
    await page.locator(`article[data-cluster="${target}"]`).waitFor();
    const cards = await page
      .locator('article.cluster')
      .evaluateAll((list) => list.map((card) => Math.round(card.getBoundingClientRect().left)));
    expect(new Set(cards).size, 'every card in the same column').toBe(1);
    await expectNoHorizontalOverflow(page, 'fleet at 390x844');
    await screenshot(page, 'fleet-phone');
    for (const label of ['Workloads', 'Pending', 'Queues', 'Charts']) {
      await go(page, label);
      await expectNoHorizontalOverflow(page, `${label} at 390x844`);
    }
  });

  it('fetched nothing from outside loopback and broke no Content-Security-Policy rule', () => {
    expect(requested.length).toBeGreaterThan(10);
    const hosts = new Set(requested.filter((u) => !u.startsWith('data:')).map((u) => new URL(u).hostname));
    for (const host of hosts) expect(['127.0.0.1', 'localhost']).toContain(host);
    expect(cspViolations).toEqual([]);
  });
});
