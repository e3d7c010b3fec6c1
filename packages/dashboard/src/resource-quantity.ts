// Quantities as the dashboard shows them. Reading one ("500m", "16Gi") is @jobrelay/resources'
// parseQuantity, the exact parser the API formats them for; only the words for a person live here.

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
