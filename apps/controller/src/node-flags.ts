/**
 * V8 flags the controller runs with, wherever it runs: the image's ENTRYPOINT, `npm run
 * controller`, the demo, the e2e tests and the benchmark (a unit test holds the Dockerfile and
 * package.json to this list). Why (docs/benchmarks.md):
 * - `--min-semi-space-size=8 --max-semi-space-size=8`: a young generation of a fixed 8 MiB per
 *   semi-space. Dispatching allocates fast and briefly (API responses, watch events); V8's default
 *   maximum left the resident memory at about 370 MiB after a 1,000-Job burst although
 *   under 100 MiB was live, and the earlier cap of 4 MiB cost CPU: over one 2,000-Job drain
 *   (`--trace-gc`) it ran 308 scavenges pausing 2.06 s in all, against 147 pausing 1.22 s at
 *   8 MiB and 75 pausing 1.02 s at 16 MiB. 8 MiB takes most of that saving for about 8 MiB more
 *   resident memory after the drain (16 MiB: about 20).
 * - `--heap-growing-percent=20`: after each full collection V8 lets the old generation grow
 *   by a factor up to 4 before the next one, sized for throughput; a burst (or the relist of
 *   10,000 Jobs at start) left it holding two to three times the live objects for a long
 *   while. Growing by 20 % at a time: with 10,000 Jobs tracked, 447 → 259 MiB 30 s after the
 *   burst and 260–274 → 226–246 MiB after a restart. Its cost, in alternation on one sandbox:
 *   6.54 and 6.34 ms of CPU per Job over a 2,000-Job drain against 5.93 and 5.96 without it
 *   (the full collections it adds: 16–23 per drain in `--trace-gc`, pausing 0.5–0.7 s).
 * - `--expose-gc`: defines `gc`, through which MemoryAfterBursts asks V8 for its memory-reducing
 *   collection once the controller is quiet after a burst that grew the heap (30 s after a
 *   10,000-Job burst: about 300 MiB resident without it, 229–231 with it; see
 *   memory-after-bursts.ts).
 * `--optimize-for-size` went further than the semi-space cap alone but cost half again as much
 * CPU per Job.
 */
export const controllerNodeFlags: readonly string[] = [
  '--min-semi-space-size=8',
  '--max-semi-space-size=8',
  '--heap-growing-percent=20',
  '--expose-gc',
];

/**
 * glibc malloc settings, through the environment, wherever the controller runs (the image's
 * ENV, `npm run controller`, the demo, the e2e tests and the benchmark; a unit test holds the
 * Dockerfile and package.json to it). Why: outside the V8 heap the process kept about 90 MiB
 * in malloc's main heap after a burst (the compilers' and TLS's transient buffers, freed but
 * not returned), because glibc raises its mmap threshold as large blocks are freed and then
 * serves them from a heap it cannot shrink. A fixed 64 KiB threshold sends large blocks to
 * mmap (returned on free), a 128 KiB trim threshold returns the heap's free top, and two
 * arenas bound the per-thread ones. With 10,000 Jobs tracked after a restart this took the
 * resident memory from about 347 to 272 MiB, with no CPU cost measured (docs/benchmarks.md).
 * Other C libraries ignore it.
 */
export const controllerEnvironment: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES:
    'glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=2',
};
