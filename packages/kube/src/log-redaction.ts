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

/** A user name printed as it is: letters, digits and `._~-`, nothing that could be part of a password. */
const plainUserName = /^[A-Za-z0-9._~-]+$/;

/**
 * A URL as it may be logged: its credentials (redis://user:secret@host) become `user:***`.
 * Everything from `://` to the LAST `@` of the text counts as credentials, whatever it holds: a
 * password may carry `@`, `:`, `/`, `?`, `#` or `%`, written raw or percent-encoded, and a
 * parser that stopped at the first of them would print the rest. An `@` in a query string makes
 * this mask more than the credentials; it never masks less. The user name is kept when it is
 * plain (letters, digits, `._~-`); anything else is masked whole.
 */
export function redactUrlCredentials(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)(.*)@/is.exec(url);
  if (!match) return url;
  const [credentials, scheme, userinfo] = match as unknown as [string, string, string];
  const colon = userinfo.indexOf(':');
  const user = colon === -1 ? '' : userinfo.slice(0, colon);
  const shown = user === '' || plainUserName.test(user) ? `${user}:***` : '***';
  return `${scheme}${colon === -1 ? '***' : shown}@${url.slice(credentials.length)}`;
}

/**
 * A process's configuration as printed at start: every value, with credentials in URLs
 * masked. The settings hold file paths, never secrets themselves (kubeconfigs and TLS keys are
 * named by path), so nothing else needs hiding.
 */
export function printableConfig(config: Record<string, unknown>): Record<string, unknown> {
  const printable = (value: unknown): unknown =>
    typeof value === 'string'
      ? redactUrlCredentials(value)
      : Array.isArray(value)
        ? value.map(printable)
        : value;
  return Object.fromEntries(Object.entries(config).map(([key, value]) => [key, printable(value)]));
}
