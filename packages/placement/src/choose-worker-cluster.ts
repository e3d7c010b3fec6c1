/** What placement knows about one WorkerCluster when it decides. */
export interface ClusterCandidate {
  name: string;
  /** The Active condition: connected and answering. */
  active: boolean;
  /** Why not, when not active (the Active condition's reason). */
  inactiveReason?: string;
  /** Unfinished jobrelay mirrors on it now, plus placements not yet mirrored there. */
  activeJobs: number;
}

export interface PlacementRequest {
  /** Clusters this Job must not go to, e.g. where a foreign Job already holds its name. */
  excludedClusters: readonly string[];
}

export type PlacementDecision =
  | { kind: 'placed'; cluster: string; message: string }
  | { kind: 'unschedulable'; message: string };

/**
 * The simple policy of the dispatch pipeline: among Active clusters not excluded, the one
 * with the fewest active jobrelay Jobs (ties by name, so the choice is reproducible). When
 * none fits, the message counts why, kube-scheduler style:
 * `0/3 clusters available: 2 not active (Unreachable), 1 excluded (name collision).`
 */
export function chooseWorkerCluster(
  candidates: readonly ClusterCandidate[],
  request: PlacementRequest,
): PlacementDecision {
  const excluded = new Set(request.excludedClusters);
  const rejections = new Map<string, number>();
  const reject = (why: string) => rejections.set(why, (rejections.get(why) ?? 0) + 1);
  const feasible: ClusterCandidate[] = [];
  for (const candidate of candidates) {
    if (excluded.has(candidate.name))
      reject('excluded (a Job of the same name that jobrelay does not own is there)');
    else if (!candidate.active) reject(`not active (${candidate.inactiveReason ?? 'unknown'})`);
    else feasible.push(candidate);
  }
  const total = candidates.length;
  if (feasible.length === 0) {
    if (total === 0)
      return { kind: 'unschedulable', message: '0/0 clusters available: no WorkerCluster is registered.' };
    const reasons = [...rejections.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([why, count]) => `${count} ${why}`);
    return { kind: 'unschedulable', message: `0/${total} clusters available: ${reasons.join(', ')}.` };
  }
  feasible.sort((a, b) => a.activeJobs - b.activeJobs || a.name.localeCompare(b.name));
  const chosen = feasible[0]!;
  return {
    kind: 'placed',
    cluster: chosen.name,
    message: `placed on ${chosen.name}: fewest active Jobs (${chosen.activeJobs}) of ${feasible.length}/${total} available clusters`,
  };
}
