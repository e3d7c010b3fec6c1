// What the apiserver's validation of KubeRay v1.5.0's CRDs enforces on a RayCluster or RayJob
// status, and nothing more: types, formats (date-time, quantity pattern) and the
// metav1.Condition list (required fields, patterns, lengths, the status enum, one condition
// per type). The CRDs put no enum on state, jobStatus or jobDeploymentStatus and no CEL
// rule on status, so neither is checked here. Unknown fields are pruned by the apiserver,
// not refused, and nulls of non-nullable fields are dropped: neither is a violation.

import { isPlainObject } from '../generic/json-values.ts';
import type { StatusViolation } from '../workload-kind-adapter.ts';

type Violations = StatusViolation[];

/** The format check behind `format: date-time` (RFC 3339 with a time zone, 'T' or 't'). */
const dateTimePattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** The CRDs' pattern for a resource.Quantity given as a string. */
const quantityPattern =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
/** metav1.Condition's reason and type patterns. */
const conditionReasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const conditionTypePattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;

function isDateTime(text: string): boolean {
  const match = dateTimePattern.exec(text);
  if (!match) return false;
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function checkString(value: unknown, field: string, out: Violations): value is string {
  if (absent(value)) return false;
  if (typeof value === 'string') return true;
  out.push({ field, message: `must be a string, not ${JSON.stringify(value)}` });
  return false;
}

function checkInteger(value: unknown, field: string, out: Violations, minimum?: number): void {
  if (absent(value)) return;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    out.push({ field, message: `must be an integer, not ${JSON.stringify(value)}` });
  } else if (minimum !== undefined && value < minimum) {
    out.push({ field, message: `must be at least ${minimum}, not ${value}` });
  }
}

function checkDateTime(value: unknown, field: string, out: Violations): void {
  if (checkString(value, field, out) && !isDateTime(value)) {
    out.push({ field, message: `must be an RFC 3339 date-time, not ${JSON.stringify(value)}` });
  }
}

function checkQuantity(value: unknown, field: string, out: Violations): void {
  if (absent(value)) return;
  if (typeof value === 'number' && Number.isInteger(value)) return;
  if (typeof value === 'string' && quantityPattern.test(value)) return;
  out.push({ field, message: `must be a resource quantity, not ${JSON.stringify(value)}` });
}

function checkObject(value: unknown, field: string, out: Violations): value is Record<string, unknown> {
  if (absent(value)) return false;
  if (isPlainObject(value)) return true;
  out.push({ field, message: `must be an object, not ${JSON.stringify(value)}` });
  return false;
}

type ValueCheck = (value: unknown, field: string, out: Violations) => unknown;

function checkStringMap(
  value: unknown,
  field: string,
  out: Violations,
  each: ValueCheck = checkString,
): void {
  if (!checkObject(value, field, out)) return;
  for (const [key, item] of Object.entries(value)) each(item, `${field}.${key}`, out);
}

function checkConditions(value: unknown, field: string, out: Violations): void {
  if (absent(value)) return;
  if (!Array.isArray(value)) {
    out.push({ field, message: `must be a list of conditions, not ${JSON.stringify(value)}` });
    return;
  }
  const seen = new Set<string>();
  value.forEach((condition: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!checkObject(condition, at, out)) {
      if (absent(condition)) out.push({ field: at, message: 'must be a condition, not null' });
      return;
    }
    for (const required of ['type', 'status', 'lastTransitionTime', 'reason', 'message']) {
      if (absent(condition[required])) out.push({ field: `${at}.${required}`, message: 'is required' });
    }
    const { type, status, reason, message } = condition;
    if (checkString(type, `${at}.type`, out)) {
      if (type.length > 316 || !conditionTypePattern.test(type)) {
        out.push({ field: `${at}.type`, message: `${JSON.stringify(type)} is not a valid condition type` });
      }
      if (seen.has(type)) {
        out.push({
          field: `${at}.type`,
          message: `duplicate condition type ${JSON.stringify(type)} (a map keyed by type)`,
        });
      }
      seen.add(type);
    }
    if (checkString(status, `${at}.status`, out) && !['True', 'False', 'Unknown'].includes(status)) {
      out.push({
        field: `${at}.status`,
        message: `must be True, False or Unknown, not ${JSON.stringify(status)}`,
      });
    }
    if (checkString(reason, `${at}.reason`, out)) {
      if (reason.length < 1 || reason.length > 1024 || !conditionReasonPattern.test(reason)) {
        out.push({
          field: `${at}.reason`,
          message: `${JSON.stringify(reason)} is not a valid condition reason`,
        });
      }
    }
    if (checkString(message, `${at}.message`, out) && message.length > 32768) {
      out.push({ field: `${at}.message`, message: 'must be at most 32768 characters' });
    }
    checkDateTime(condition.lastTransitionTime, `${at}.lastTransitionTime`, out);
    checkInteger(condition.observedGeneration, `${at}.observedGeneration`, out, 0);
  });
}

/** A RayCluster status (also a RayJob's status.rayClusterStatus) against the CRD's schema. */
export function rayClusterStatusViolations(status: unknown, field = 'status'): StatusViolation[] {
  const out: Violations = [];
  if (!checkObject(status, field, out)) return out;
  for (const key of ['state', 'reason']) checkString(status[key], `${field}.${key}`, out);
  for (const key of ['desiredCPU', 'desiredMemory', 'desiredGPU', 'desiredTPU']) {
    checkQuantity(status[key], `${field}.${key}`, out);
  }
  for (const key of [
    'readyWorkerReplicas',
    'availableWorkerReplicas',
    'desiredWorkerReplicas',
    'minWorkerReplicas',
    'maxWorkerReplicas',
    'observedGeneration',
  ]) {
    checkInteger(status[key], `${field}.${key}`, out);
  }
  checkDateTime(status.lastUpdateTime, `${field}.lastUpdateTime`, out);
  checkStringMap(status.stateTransitionTimes, `${field}.stateTransitionTimes`, out, checkDateTime);
  checkStringMap(status.endpoints, `${field}.endpoints`, out);
  if (checkObject(status.head, `${field}.head`, out)) {
    for (const key of ['podIP', 'serviceIP', 'podName', 'serviceName']) {
      checkString(status.head[key], `${field}.head.${key}`, out);
    }
  }
  checkConditions(status.conditions, `${field}.conditions`, out);
  return out;
}

/** A RayJob status against the CRD's schema. */
export function rayJobStatusViolations(status: unknown, field = 'status'): StatusViolation[] {
  const out: Violations = [];
  if (!checkObject(status, field, out)) return out;
  for (const key of [
    'jobId',
    'rayClusterName',
    'dashboardURL',
    'jobStatus',
    'jobDeploymentStatus',
    'reason',
    'message',
  ]) {
    checkString(status[key], `${field}.${key}`, out);
  }
  for (const key of ['startTime', 'endTime']) checkDateTime(status[key], `${field}.${key}`, out);
  for (const key of ['succeeded', 'failed', 'observedGeneration'])
    checkInteger(status[key], `${field}.${key}`, out);
  if (checkObject(status.rayJobInfo, `${field}.rayJobInfo`, out)) {
    for (const key of ['startTime', 'endTime']) {
      checkDateTime(status.rayJobInfo[key], `${field}.rayJobInfo.${key}`, out);
    }
  }
  if (!absent(status.rayClusterStatus)) {
    out.push(...rayClusterStatusViolations(status.rayClusterStatus, `${field}.rayClusterStatus`));
  }
  return out;
}
