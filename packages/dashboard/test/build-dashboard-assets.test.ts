import { describe, expect, it } from 'vitest';
import { buildDashboardAssets, dashboardContentSecurityPolicy } from '../src/build-dashboard-assets.ts';

describe('buildDashboardAssets', () => {
  it('bundles the browser sources into one script and one stylesheet that fetch nothing from elsewhere', async () => {
    const { html, js, css } = await buildDashboardAssets();
    expect(js).toContain('/api/v1/me');
    expect(js).toContain('/api/v1/watch');
    expect(css).toContain('.cluster');
    // The wire types come as types only (and phases from their zod-free module): no zod in the page.
    expect(js).not.toMatch(/\bZodError\b|\$ZodType/);
    // Only the page's own files, by relative URL: no CDN, no web font, no inline script.
    expect([...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'data:,',
      'app.css',
      'app.js',
    ]);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    expect(css).not.toMatch(/url\(|@import/);
    // The only absolute URL in the script is the SVG namespace, an identifier never fetched.
    expect([...new Set(js.match(/https?:\/\/[^"'`\s)]+/g) ?? [])]).toEqual(['http://www.w3.org/2000/svg']);
    expect(dashboardContentSecurityPolicy).toMatch(
      /^default-src 'self'; script-src 'self'; style-src 'self'/,
    );
  });
});
