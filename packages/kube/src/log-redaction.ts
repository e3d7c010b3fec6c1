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
