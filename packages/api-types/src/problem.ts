import { z } from 'zod';

/** A permission the caller lacks, as a SubjectAccessReview names it. */
export const permissionSchema = z.object({
  verb: z.string(),
  group: z.string().optional(),
  resource: z.string().optional(),
  subresource: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  nonResourceURL: z.string().optional(),
});

export type MissingPermission = z.infer<typeof permissionSchema>;

/** Every error the API answers is one of these (application/problem+json); clients match on `code`. */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    instance: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    missingPermission: permissionSchema.optional(),
    reason: z.string().optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export type Problem = z.infer<typeof problemSchema>;
