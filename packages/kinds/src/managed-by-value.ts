import { z } from 'zod';

/**
 * A spec.managedBy value (reference/job-api-rules.md, "spec.managedBy"; KEP-4368): a
 * domain-prefixed path of at most 63 characters, the path from the characters the apiserver's
 * IsDomainPrefixedPath allows. One rule for every flag and configuration that names one.
 */
export const managedByValue = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/,
    'must be a domain-prefixed path such as example.com/dispatcher',
  );
