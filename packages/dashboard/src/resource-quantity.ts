const suffixes: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/**
 * A Kubernetes quantity as a number of base units ("500m" -> 0.5, "16Gi" -> 17179869184,
 * "1e3" -> 1000), or undefined when it is not one. Enough for bars and labels: the capacity
 * the API reports, not requests to validate (the API does that with the exact parser).
 */
export function quantityValue(text: string): number | undefined {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(
    text.trim(),
  );
  if (!match) return undefined;
  const value = Number(match[1]) * (match[2] ? 10 ** Number(match[2].slice(1)) : suffixes[match[3] ?? '']!);
  return Number.isFinite(value) ? value : undefined;
}

/** An amount for a person: cpu in cores ("2.5"), bytes in binary units ("1.5 GiB"), else the number. */
export function formatQuantity(resource: string, value: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10);
  if (resource === 'memory' || resource.endsWith('storage')) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let unit = 0;
    let scaled = value;
    while (Math.abs(scaled) >= 1024 && unit < units.length - 1) {
      scaled /= 1024;
      unit += 1;
    }
    return `${round(scaled)} ${units[unit]}`;
  }
  return round(value);
}
