// A worker's own admission is a second gate jobrelay never fights: a mirror gets the origin's
// suspend *transitions*, never a standing value (a Kueue on the worker holds a workload naming
// one of its LocalQueues suspended until its quota admits it). What was last sent is recorded on
// the mirror (suspendSentAnnotation), so a transition is knowable without memory. Kind-neutral:
// each kind says what it intends and where its mirror's suspend lives.
import { suspendSentAnnotation } from './jobrelay-names.ts';

interface Annotated {
  metadata?: { annotations?: Record<string, string> };
}

/** The suspend value last sent to the mirror, as recorded on it; undefined on a mirror built before the record. */
export function suspendSent(mirror: Annotated): boolean | undefined {
  const sent = mirror.metadata?.annotations?.[suspendSentAnnotation];
  return sent === 'true' ? true : sent === 'false' ? false : undefined;
}

/**
 * The suspend value to send the mirror when jobrelay's intent changed since it last sent one,
 * else undefined. A mirror without the record (built by an older jobrelay) is brought to the
 * intent once (`mirrorSuspended` is its value now).
 */
export function suspendTransition(
  intended: boolean,
  mirror: Annotated,
  mirrorSuspended: boolean,
): boolean | undefined {
  const sent = suspendSent(mirror) ?? mirrorSuspended;
  return intended !== sent ? intended : undefined;
}

/** The record of the suspend value sent, to write with the mirror's spec patch; undefined when it is current. */
export function suspendRecordUpdate(
  intended: boolean,
  mirror: Annotated,
): Record<string, string> | undefined {
  const value = String(intended);
  return mirror.metadata?.annotations?.[suspendSentAnnotation] === value
    ? undefined
    : { [suspendSentAnnotation]: value };
}

/**
 * Whether the mirror is held suspended by its worker: suspended there though the origin is not
 * and jobrelay last told it to run.
 */
export function heldByWorker(originSuspended: boolean, mirror: Annotated, mirrorSuspended: boolean): boolean {
  return mirrorSuspended && !originSuspended && suspendSent(mirror) === false;
}
