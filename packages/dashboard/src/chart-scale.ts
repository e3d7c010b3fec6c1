/**
 * A y axis for values up to `max`: a rounded top (1, 2 or 5 times a power of ten, at least
 * `max`) and evenly spaced ticks from 0 to it, so labels read 0, 5, 10 rather than 0, 4.3, 8.6.
 */
export function niceScale(max: number, tickCount = 4): { top: number; ticks: number[] } {
  if (!Number.isFinite(max) || max <= 0) return { top: 1, ticks: [0, 1] };
  const roughStep = max / tickCount;
  const magnitude = 10 ** Math.floor(Math.log10(roughStep));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= roughStep) ?? 10 * magnitude;
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; i <= Math.round(top / step); i++) ticks.push(Number((i * step).toPrecision(12)));
  return { top: ticks.at(-1)!, ticks };
}

export interface PlotArea {
  width: number;
  height: number;
}

/**
 * SVG path data for a line through `values` (one per slot, left to right, null leaves a gap)
 * scaled so `top` is the area's top edge and 0 its bottom.
 */
export function linePath(values: ReadonlyArray<number | null>, top: number, area: PlotArea): string {
  const stepX = values.length > 1 ? area.width / (values.length - 1) : 0;
  let path = '';
  let drawing = false;
  values.forEach((value, i) => {
    if (value === null || !Number.isFinite(value)) {
      drawing = false;
      return;
    }
    const x = Math.round(i * stepX * 10) / 10;
    const y = Math.round(yOf(value, top, area.height) * 10) / 10;
    path += `${drawing ? 'L' : 'M'}${x} ${y}`;
    drawing = true;
  });
  return path;
}

/** The y coordinate of `value` on an axis from 0 (bottom) to `top`; clamped into the area. */
export function yOf(value: number, top: number, height: number): number {
  const fraction = top > 0 ? value / top : 0;
  return height - Math.min(Math.max(fraction, 0), 1) * height;
}

/** Stacked bar heights: for each slot, each series' segment [y, height] in pixels, bottom up. */
export function stackedBars(
  series: ReadonlyArray<ReadonlyArray<number>>,
  top: number,
  height: number,
): Array<Array<{ y: number; height: number }>> {
  const slots = Math.max(0, ...series.map((s) => s.length));
  return Array.from({ length: slots }, (_, slot) => {
    let base = 0;
    return series.map((values) => {
      const value = Math.max(0, values[slot] ?? 0);
      const y0 = yOf(base, top, height);
      const y1 = yOf(base + value, top, height);
      base += value;
      return { y: y1, height: y0 - y1 };
    });
  });
}

/**
 * SVG path data for timed points (irregular samples), x from `from` (left edge) to `to` (right
 * edge) in ms; points outside are left out.
 */
export function timeLinePath(
  points: ReadonlyArray<{ at: number; value: number }>,
  from: number,
  to: number,
  top: number,
  area: PlotArea,
): string {
  const span = to - from;
  let path = '';
  for (const { at, value } of points) {
    if (at < from || at > to || span <= 0 || !Number.isFinite(value)) continue;
    const x = Math.round(((at - from) / span) * area.width * 10) / 10;
    const y = Math.round(yOf(value, top, area.height) * 10) / 10;
    path += `${path ? 'L' : 'M'}${x} ${y}`;
  }
  return path;
}
