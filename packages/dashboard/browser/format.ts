import { h } from './dom.ts';

/** "42s", "5m 3s", "2h 10m", "3d 4h": a duration at a glance. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** How long ago an ISO time was, or an em dash. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const at = Date.parse(iso);
  return Number.isFinite(at) ? `${duration((now - at) / 1000)} ago` : '—';
}

export function clock(iso: string | null | undefined): string {
  if (!iso) return '—';
  const at = new Date(iso);
  return Number.isNaN(at.getTime())
    ? '—'
    : at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

const phaseTones: Record<string, string> = {
  running: 'info',
  placed: 'info',
  pending: 'warn',
  finished: 'ok',
  suspended: 'muted',
};

const phaseWords: Record<string, string> = {
  pending: 'Pending',
  placed: 'Placed',
  running: 'Running',
  finished: 'Finished',
  suspended: 'Suspended',
};

/** A status as colour and words together: never colour alone. */
export function badge(text: string, tone: string, title?: string) {
  return h('span', { class: `badge badge-${tone}`, ...(title ? { title } : {}) }, text);
}

export function phaseBadge(phase: string) {
  return badge(phaseWords[phase] ?? phase, phaseTones[phase] ?? 'muted');
}

/** Where the caller's rights stop, said plainly: what they lack, as a SubjectAccessReview names it. */
export function notAllowed(what: string, needs: string) {
  return h(
    'p',
    { class: 'not-allowed' },
    `You may not ${what}: your RBAC lacks `,
    h('code', null, needs),
    '.',
  );
}

export function errorBox(message: string) {
  return h('p', { class: 'error', role: 'alert' }, message);
}
