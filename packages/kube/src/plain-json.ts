import type { V1ObjectMeta, V1PodSpec, V1PodTemplateSpec } from '@kubernetes/client-node';

/**
 * A client-node model as the apiserver sends it and jobrelay keeps it: plain JSON, whose time
 * fields are the RFC 3339 strings on the wire. client-node's models type those fields as Date
 * because its generated clients convert every object through a serializer; jobrelay reads and
 * writes every kind as plain JSON instead (watch events arrive that way, custom resources stay
 * that way), so `PlainJson<V1Pod>` is what a Pod really is here.
 */
export type PlainJson<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? PlainJson<Item>[]
    : T extends object
      ? { [Key in keyof T]: PlainJson<T[Key]> }
      : T;

/** Object metadata as plain JSON: creationTimestamp and deletionTimestamp are strings. */
export type ObjectMeta = PlainJson<V1ObjectMeta>;
/** A pod spec as plain JSON (an ephemeral volume's claim template carries metadata). */
export type PodSpec = PlainJson<V1PodSpec>;
export type PodTemplateSpec = PlainJson<V1PodTemplateSpec>;

/**
 * A time as metav1.Time's JSON form, whole seconds in UTC (`2026-12-03T10:00:00Z`): what the
 * apiserver stores and returns, so a time jobrelay writes compares equal to what it reads back.
 */
export function rfc3339Seconds(date: Date | number): string {
  const ms = typeof date === 'number' ? date : date.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
