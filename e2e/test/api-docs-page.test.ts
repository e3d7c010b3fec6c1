// Swagger UI (/docs) in Chromium: it works under its Content-Security-Policy (no violation, the
// operations render, "Try it out" reaches the API), and a token given to "Authorize" is kept by
// the page only, never in localStorage, where any script of the origin could read it.
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../src/api-harness.ts';
import { testSandbox } from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();
let api: ApiHarness;
let url: string;
let browser: Browser;

beforeAll(async () => {
  api = await startApiHarness(sandbox);
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const address = api.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the API listens on no TCP port');
  url = `http://127.0.0.1:${address.port}`;
  browser = await chromium.launch({
    executablePath: process.env.JOBRELAY_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    // As root (CI containers) Chromium refuses to start with its sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('Swagger UI', () => {
  it('is served with a Content-Security-Policy like the dashboard’s', async () => {
    for (const path of [
      '/docs/',
      '/docs/static/swagger-initializer.js',
      '/docs/static/swagger-ui-bundle.js',
    ]) {
      const response = await fetch(`${url}${path}`);
      expect(response.status, path).toBe(200);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy, path).toMatch(/^default-src 'self'; script-src 'self';/);
      expect(policy, path).toContain("connect-src 'self'");
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).not.toContain('unsafe-inline');
      await response.body?.cancel();
    }
    const initializer = await (await fetch(`${url}/docs/static/swagger-initializer.js`)).text();
    expect(initializer).toContain('"persistAuthorization":false');
  });

  it('works under it, and keeps an authorized token out of localStorage', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    // Every CSP violation the page reports, from the first script on.
    // (Strings: the browser's globals are not this file's.)
    await page.addInitScript(`
      window.violations = [];
      document.addEventListener('securitypolicyviolation', (event) => {
        window.violations.push(event.violatedDirective + ' ' + event.blockedURI + ' ' + event.sourceFile + ':' + event.lineNumber);
      });
    `);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.goto(`${url}/docs/`);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('.info .title').textContent()).toContain('jobrelay admin API');

      const token = sandbox.token('viewer');
      await page.locator('.btn.authorize').first().click();
      await page
        .locator('.modal-ux input[type="text"], .modal-ux input[type="password"]')
        .first()
        .fill(token);
      await page.locator('.modal-ux .btn.modal-btn.auth.authorize').click();
      await page.locator('.modal-ux .btn-done, .modal-ux .close-modal').first().click();

      // "Try it out" on GET /api/v1/kinds: the page's own fetch, with the token, under the policy.
      const operation = page.locator('.opblock-get', { hasText: '/api/v1/kinds' }).first();
      await operation.locator('.opblock-summary').click();
      await operation.locator('.try-out__btn').click();
      await operation.locator('.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor({ timeout: 30_000 });
      expect((await status.textContent())?.trim()).toBe('200');

      const stored = await page.evaluate<{
        local: Array<[string, string]>;
        session: Array<[string, string]>;
      }>('({ local: Object.entries(localStorage), session: Object.entries(sessionStorage) })');
      expect(JSON.stringify(stored.local)).not.toContain(token);
      expect(stored.local.map(([key]) => key)).not.toContain('authorized');
      expect(JSON.stringify(stored.session)).not.toContain(token);
      // A reload forgets it.
      await page.reload();
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('.btn.authorize.locked').count()).toBe(0);

      violations.push(...(await page.evaluate<string[]>('window.violations')));
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
