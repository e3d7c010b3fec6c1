/**
 * pino's redaction for every jobrelay process (controller and API): credentials never reach
 * the logs, whatever an error object or request carries.
 */
export const logRedaction = {
  paths: [
    '*.token',
    '*.kubeconfig',
    'body.kubeconfig',
    'req.headers.authorization',
    '*.headers.authorization',
    '*.headers.Authorization',
    'err.config',
    'err.headers',
  ],
  censor: '[redacted]',
};

/** A URL as it may be logged: a password in it (redis://:secret@host) becomes `***`. */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return `${scheme}${colon === -1 ? '***' : `${userinfo.slice(0, colon)}:***`}@`;
  });
}

/**
 * A process's configuration as printed at start: every value, with credentials in URLs
 * masked. The settings hold file paths, never secrets themselves (kubeconfigs and TLS keys are
 * named by path), so nothing else needs hiding.
 */
export function printableConfig(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [
      key,
      typeof value === 'string' ? redactUrlCredentials(value) : value,
    ]),
  );
}
