import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The dashboard as the API serves it under /dashboard/: one page, one script, one stylesheet. */
export interface DashboardAssets {
  html: string;
  js: string;
  css: string;
}

const entryPoint = fileURLToPath(new URL('../browser/main.ts', import.meta.url));

/**
 * Every resource comes from the API's own origin: no CDN, no web font, no inline script or
 * style (the DOM is built by the script; sizes are SVG attributes or CSSOM properties, which
 * this policy allows). `connect-src 'self'` keeps every fetch on the API.
 */
export const dashboardContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>jobrelay dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="app.css">
<script src="app.js" defer></script>
</head>
<body>
<div id="app"><p class="boot">Loading the jobrelay dashboard…</p></div>
<noscript><p>The jobrelay dashboard needs JavaScript. The same data is in the API: /docs lists every route.</p></noscript>
</body>
</html>
`;

/**
 * Bundles the browser sources (TypeScript, packages/dashboard/browser) with esbuild in memory,
 * nothing written to disk: the API builds it once when it starts, so `npm run api`, the demo,
 * the tests and the container need no build step. Takes about 100 ms.
 */
export async function buildDashboardAssets(): Promise<DashboardAssets> {
  const result = await build({
    entryPoints: [entryPoint],
    bundle: true,
    write: false,
    outdir: 'dashboard',
    entryNames: 'app',
    format: 'iife',
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((file) => file.path.endsWith('.js'))?.text;
  const css = result.outputFiles.find((file) => file.path.endsWith('.css'))?.text;
  if (js === undefined || css === undefined)
    throw new Error(
      `esbuild produced ${result.outputFiles.map((f) => f.path).join(', ')}, not app.js and app.css`,
    );
  return { html: page, js, css };
}

let built: Promise<DashboardAssets> | undefined;

/** The bundle, built on the first call and reused after; a failed build is tried again next time. */
export function dashboardAssets(): Promise<DashboardAssets> {
  if (!built) {
    built = buildDashboardAssets();
    built.catch(() => {
      built = undefined;
    });
  }
  return built;
}
