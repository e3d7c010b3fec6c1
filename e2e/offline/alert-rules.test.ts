// The shipped alerts (deploy/helm/jobrelay/files/alerts.rules.yaml), checked by Prometheus's
// own promtool (built from the Go module proxy): the file is valid, and each alert fires on
// the series that should trigger it, only after its `for`, and not on the ones that should not
// (promtool's rule unit tests, written here as data).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryRoot, resolveGoTool } from '@jobrelay/sandbox';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse, stringify } from 'yaml';

const rules = join(repositoryRoot, 'deploy/helm/jobrelay/files/alerts.rules.yaml');
let promtool: string;

beforeAll(async () => {
  promtool = await resolveGoTool('promtool', (line) => console.log(`[promtool] ${line}`));
}, 30 * 60_000);

function run(args: string[]) {
  const result = spawnSync(promtool, args, { encoding: 'utf8' });
  return { code: result.status, output: `${result.stdout}\n${result.stderr}` };
}

interface AlertCase {
  name: string;
  /** Input series, promtool notation: 'metric{labels}' → '0+0x20' (a value per interval). */
  series: Record<string, string>;
  /** When to look (e.g. '6m'), and the alerts expected firing then (labels beyond alertname). */
  at: string;
  alert: string;
  firing: Array<Record<string, string>>;
  /** How `{{ $value | humanizeDuration }}` reads at `at`, where the alert's text shows it. */
  valueText?: string;
}

const ruleFile = parse(readFileSync(rules, 'utf8')) as {
  groups: Array<{ rules: Array<{ alert: string; annotations: Record<string, string> }> }>;
};

/** The alert's annotations as Prometheus renders them for these labels: the text an operator reads. */
function renderedAnnotations(
  alert: string,
  labels: Record<string, string>,
  valueText?: string,
): Record<string, string> {
  const rule = ruleFile.groups.flatMap((g) => g.rules).find((r) => r.alert === alert)!;
  return Object.fromEntries(
    Object.entries(rule.annotations).map(([key, text]) => [
      key,
      text
        .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? '')
        .replace(/\{\{ \$value \| humanizeDuration \}\}/g, valueText ?? ''),
    ]),
  );
}

const leaderA = 'instance="a"';
const followerB = 'instance="b"';

const cases: AlertCase[] = [
  {
    name: 'a worker the leader sees not Active for 5 minutes',
    series: {
      [`jobrelay_leader{${leaderA}}`]: '1+0x20',
      [`jobrelay_leader{${followerB}}`]: '0+0x20',
      [`jobrelay_worker_cluster_active{${leaderA},cluster="worker-1"}`]: '0+0x20',
      [`jobrelay_worker_cluster_active{${leaderA},cluster="worker-2"}`]: '1+0x20',
    },
    at: '6m',
    alert: 'JobrelayWorkerClusterNotActive',
    firing: [{ cluster: 'worker-1', severity: 'warning' }],
  },
  {
    name: 'not yet at 4 minutes',
    series: {
      [`jobrelay_leader{${leaderA}}`]: '1+0x20',
      [`jobrelay_worker_cluster_active{${leaderA},cluster="worker-1"}`]: '0+0x20',
    },
    at: '4m',
    alert: 'JobrelayWorkerClusterNotActive',
    firing: [],
  },
  {
    name: 'only a follower sees it not Active',
    series: {
      [`jobrelay_leader{${leaderA}}`]: '1+0x20',
      [`jobrelay_leader{${followerB}}`]: '0+0x20',
      [`jobrelay_worker_cluster_active{${leaderA},cluster="worker-1"}`]: '1+0x20',
      [`jobrelay_worker_cluster_active{${followerB},cluster="worker-1"}`]: '0+0x20',
    },
    at: '10m',
    alert: 'JobrelayWorkerClusterNotActive',
    firing: [],
  },
  {
    name: 'a rejected status write',
    series: {
      [`jobrelay_origin_status_writes_total{${leaderA},result="rejected"}`]: '0 0 0 1 1 1 1',
      [`jobrelay_origin_status_writes_total{${leaderA},result="written"}`]: '0+10x6',
    },
    at: '5m',
    alert: 'JobrelayStatusWriteRejected',
    firing: [{ severity: 'critical' }],
  },
  {
    name: 'status writes, none rejected',
    series: { [`jobrelay_origin_status_writes_total{${leaderA},result="written"}`]: '0+10x20' },
    at: '15m',
    alert: 'JobrelayStatusWriteRejected',
    firing: [],
  },
  {
    name: 'the oldest waiting task waits longer and longer',
    // Growing by 60 s a minute: a task that stays at the head of the queue.
    series: { [`jobrelay_placement_queue_oldest_waiting_seconds{${leaderA}}`]: '0+60x40' },
    at: '25m',
    alert: 'JobrelayPlacementQueueFallingBehind',
    firing: [{ severity: 'warning' }],
    valueText: '25m 0s',
  },
  {
    name: 'a steady short wait',
    series: { [`jobrelay_placement_queue_oldest_waiting_seconds{${leaderA}}`]: '5+0x40' },
    at: '25m',
    alert: 'JobrelayPlacementQueueFallingBehind',
    firing: [],
  },
  {
    name: 'no replica leads',
    series: { [`jobrelay_leader{${leaderA}}`]: '0+0x10', [`jobrelay_leader{${followerB}}`]: '0+0x10' },
    at: '3m',
    alert: 'JobrelayNoLeader',
    firing: [{ severity: 'critical' }],
  },
  {
    name: 'one replica leads',
    series: { [`jobrelay_leader{${leaderA}}`]: '1+0x10', [`jobrelay_leader{${followerB}}`]: '0+0x10' },
    at: '3m',
    alert: 'JobrelayNoLeader',
    firing: [],
  },
  {
    name: 'a fifth of reconciles fail',
    series: {
      [`jobrelay_reconciles_total{${leaderA},result="ok"}`]: '0+80x30',
      [`jobrelay_reconciles_total{${leaderA},result="error"}`]: '0+20x30',
    },
    at: '20m',
    alert: 'JobrelayReconcileErrors',
    firing: [{ severity: 'warning' }],
  },
  {
    name: 'one reconcile in a hundred fails',
    series: {
      [`jobrelay_reconciles_total{${leaderA},result="ok"}`]: '0+99x30',
      [`jobrelay_reconciles_total{${leaderA},result="error"}`]: '0+1x30',
    },
    at: '20m',
    alert: 'JobrelayReconcileErrors',
    firing: [],
  },
  {
    name: 'a queue with workloads pending and no admission for 15 minutes',
    series: {
      [`jobrelay_queue_pending_workloads{${leaderA},queue="research"}`]: '3+0x30',
      [`jobrelay_queue_pending_workloads{${followerB},queue="research"}`]: '0+0x30',
      [`jobrelay_queue_pending_workloads{${leaderA},queue="team-b"}`]: '0+0x30',
    },
    at: '16m',
    alert: 'JobrelayQueueStarved',
    firing: [{ queue: 'research', severity: 'warning' }],
  },
  {
    name: 'a queue that admits while workloads wait',
    series: {
      [`jobrelay_queue_pending_workloads{${leaderA},queue="research"}`]: '3+0x30',
      [`jobrelay_queue_admission_wait_seconds_count{${leaderA},queue="research"}`]: '0+1x30',
    },
    at: '20m',
    alert: 'JobrelayQueueStarved',
    firing: [],
  },
  {
    name: 'workloads pending for 10 minutes only',
    series: { [`jobrelay_queue_pending_workloads{${leaderA},queue="research"}`]: '0x10 3+0x20' },
    at: '16m',
    alert: 'JobrelayQueueStarved',
    firing: [],
  },
  {
    name: 'admissions that stopped 20 minutes ago',
    series: {
      [`jobrelay_queue_pending_workloads{${leaderA},queue="research"}`]: '3+0x40',
      [`jobrelay_queue_admission_wait_seconds_count{${leaderA},queue="research"}`]: '0+1x10 10+0x30',
    },
    at: '30m',
    alert: 'JobrelayQueueStarved',
    firing: [{ queue: 'research', severity: 'warning' }],
  },
];

describe('the shipped alert rules', () => {
  it('pass promtool check rules', () => {
    const { code, output } = run(['check', 'rules', rules]);
    expect(code, output).toBe(0);
    expect(output).toContain('SUCCESS: 6 rules found');
  });

  it.each(cases)('$alert: $name', ({ series, at, alert, firing, valueText }) => {
    const dir = mkdtempSync(join(tmpdir(), 'jobrelay-alerts-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const testFile = join(dir, 'test.yaml');
    writeFileSync(
      testFile,
      stringify({
        rule_files: [rules],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: Object.entries(series).map(([name, values]) => ({ series: name, values })),
            alert_rule_test: [
              {
                eval_time: at,
                alertname: alert,
                exp_alerts: firing.map((labels) => ({
                  exp_labels: labels,
                  exp_annotations: renderedAnnotations(alert, labels, valueText),
                })),
              },
            ],
          },
        ],
      }),
    );
    const { code, output } = run(['test', 'rules', testFile]);
    expect(code, output).toBe(0);
  });
});
