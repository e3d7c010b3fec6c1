/**
 * A metav1.MicroTime field's value (Event series, Lease renewals): the apiserver wants six
 * fractional digits; client-node serialises a Date with three, which it rejects. A string is
 * passed through as it is, hence the cast.
 */
export function microTime(ms: number): Date {
  return new Date(ms).toISOString().replace(/Z$/, '000Z') as unknown as Date;
}
