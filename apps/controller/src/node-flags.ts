/**
 * V8 flags the controller runs with, wherever it runs: the image's ENTRYPOINT, `npm run
 * controller`, the demo, the e2e tests and the benchmark (a unit test holds the Dockerfile and
 * package.json to this list). Why: dispatching allocates fast and briefly (API responses, watch
 * events), and V8 then grows its young generation to its default maximum, which left the
 * resident memory at about 370 MiB after a 1,000-Job burst although under 100 MiB was live.
 * Capping each semi-space at 4 MiB brought that to about 230 MiB with no measurable CPU cost
 * (docs/benchmarks.md). --optimize-for-size went further (about 190 MiB) but cost half again
 * as much CPU per Job.
 */
export const controllerNodeFlags: readonly string[] = ['--max-semi-space-size=4'];
