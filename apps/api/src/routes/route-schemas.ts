// The request parts several routes validate (names, kind filters) and the problem answers every
// route documents: one definition, imported by the route modules.
import { dns1123Label, dns1123Subdomain } from '@jobrelay/kube';
import { z } from 'zod';
import { problemSchema } from '../problems.ts';

export const errors = { '4xx': problemSchema, '5xx': problemSchema };

export const namespaceName = z.string().max(63).regex(dns1123Label, 'must be a namespace name');

/** An adapter name as URLs and filters give it. */
export const kindName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a kind name such as job, raycluster or rayjob');

/** A comma-separated list of kind names. */
export const kindList = z
  .string()
  .max(1024)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    'must be kind names separated by commas, e.g. raycluster,rayjob',
  );

export const workloadName = z.string().max(253).regex(dns1123Subdomain, 'must be an object name');
