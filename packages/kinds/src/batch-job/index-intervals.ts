/**
 * completedIndexes / failedIndexes use the Job API's interval notation: "1,3-5,7". These
 * helpers merge the sets of two placement attempts.
 */
const interval = /^(\d+)(?:-(\d+))?$/;

/**
 * Parts that are not "n" or "n-m" are skipped. They are matched strictly: Number('') is 0, so
 * a loose parse would turn "1,3," or "-1" into a completed index 0 that never ran.
 */
export function parseIndexIntervals(text: string | undefined): number[] {
  if (!text) return [];
  const indexes: number[] = [];
  for (const part of text.split(',')) {
    const match = interval.exec(part.trim());
    if (!match) continue;
    const first = Number(match[1]);
    const end = match[2] === undefined ? first : Number(match[2]);
    for (let i = first; i <= end; i++) indexes.push(i);
  }
  return indexes;
}

/**
 * Written exactly as the built-in Job controller writes it (pkg/controller/job, orderedIntervals
 * String): a run of three or more is "a-b", but two adjacent indexes are "a,b", not "a-b".
 * Both parse the same; scripts compare the strings, so the origin must match a single cluster.
 */
export function formatIndexIntervals(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    if (j === i) parts.push(`${sorted[i]}`);
    else parts.push(`${sorted[i]}${j === i + 1 ? ',' : '-'}${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

export function unionIndexIntervals(...texts: Array<string | undefined>): string {
  return formatIndexIntervals(texts.flatMap((t) => parseIndexIntervals(t)));
}
