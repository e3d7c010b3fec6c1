/**
 * A kubectl-style table: uppercase headers, columns padded to their widest cell and separated by
 * two spaces, no trailing blanks. Cells are single-line (newlines would break the columns).
 */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map(singleLine))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells
    .map((row) =>
      headers
        .map((_, column) => {
          const cell = row[column] ?? '';
          return column === headers.length - 1 ? cell : cell.padEnd(widths[column] ?? 0);
        })
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

function singleLine(cell: string): string {
  return cell.replace(/\s*\n\s*/g, ' ');
}

/** What kubectl shows for an absent value. */
export const none = '<none>';

export function orNone(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? none : String(value);
}
