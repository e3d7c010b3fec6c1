/**
 * Kubernetes resource quantities ("500m", "1Gi", "1e3"), as k8s.io/apimachinery
 * pkg/api/resource ParseQuantity reads them, and the integer resource maps placement
 * compares. Quantities are parsed exactly (bigint) and only turned into a number at the end,
 * so "0.3" cpu is 300 millicores, not 300.00000000000006.
 */

/** A map of resource name -> amount in canonical integer units: cpu in millicores (rounded up), everything else in base units (rounded up). */
export type Resources = Record<string, number>;

// <sign><digits>[.<digits>]<suffix>. Unlike Go we require at least one digit: Go reads "-",
// "+", "." and a bare suffix such as "Gi" as zero, which is never what a person meant.
const quantityPattern = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]+)?$/;

const decimalSuffixExponent: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const binarySuffixExponent: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

/** Go parses the exponent of "1e<n>" as an int32 (and silently wraps beyond it); we refuse instead. */
const maxExponent = 2 ** 31 - 1;
/** Go rounds every quantity up to a whole number of nano units (inf.RoundUp at scale 9). */
const nanoExponent = -9;
/** Go caps binary-suffixed quantities at the largest int64. */
const maxInt64 = 2n ** 63n - 1n;
/** A quantity of 10^20 or more is surely past maxInt64; smaller ones are compared exactly. */
const maxInt64Magnitude = 19;
/** Numbers beyond ~1.8e308 are not finite doubles; anything past 1e400 cannot become one. */
const maxDecimalMagnitude = 400;

/** value = (negative ? -1 : 1) * digits * 10^exponent, exactly. */
interface ExactQuantity {
  negative: boolean;
  digits: bigint;
  exponent: number;
}

function parseExact(text: string): ExactQuantity | undefined {
  const match = quantityPattern.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  if (whole.length + fraction.length === 0) return undefined;

  let exponent = -fraction.length;
  let binaryExponent = 0;
  if (suffix in binarySuffixExponent) binaryExponent = binarySuffixExponent[suffix]!;
  else if (suffix in decimalSuffixExponent) exponent += decimalSuffixExponent[suffix]!;
  else if (suffix !== '') {
    const written = Number(suffix.slice(1));
    if (!Number.isSafeInteger(written) || Math.abs(written) > maxExponent) return undefined;
    exponent += written;
  }

  const negative = sign === '-';
  let digits = BigInt(whole + fraction) * 2n ** BigInt(binaryExponent);
  if (digits === 0n) return { negative: false, digits: 0n, exponent: 0 };

  // Bound the work before any 10^exponent is computed: "1e2000000000" must not hang.
  const magnitude = digits.toString().length - 1 + exponent;
  if (binaryExponent > 0 && magnitude > maxInt64Magnitude) return { negative, digits: maxInt64, exponent: 0 };
  if (magnitude > maxDecimalMagnitude) return undefined;
  if (magnitude < nanoExponent - 1) return { negative, digits: 1n, exponent: nanoExponent };

  if (exponent < nanoExponent) {
    digits = ceilDivide(digits, 10n ** BigInt(nanoExponent - exponent));
    exponent = nanoExponent;
  }
  // Binary quantities have no decimal suffix, so their exponent is never positive here.
  if (binaryExponent > 0 && digits > maxInt64 * 10n ** BigInt(-exponent)) {
    return { negative, digits: maxInt64, exponent: 0 };
  }
  return { negative, digits, exponent };
}

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/** The non-negative integer ceil(digits * 10^exponent). */
function ceilScaled(digits: bigint, exponent: number): bigint {
  return exponent >= 0 ? digits * 10n ** BigInt(exponent) : ceilDivide(digits, 10n ** BigInt(-exponent));
}

/**
 * A quantity in base units ("500m" -> 0.5, "1Gi" -> 1073741824, "1e3" -> 1000), or
 * undefined when `text` is not a quantity or its value is beyond a finite number.
 * Follows Go's grammar (signs, "1.", ".5", "1e-3", "1E3" vs "1E") except that a quantity
 * must contain a digit.
 */
export function parseQuantity(text: string): number | undefined {
  const exact = parseExact(text);
  if (!exact) return undefined;
  if (exact.digits === 0n) return 0;
  // The decimal string is rounded to the nearest double correctly, unlike digits * 10 ** exponent.
  const value = Number(`${exact.negative ? '-' : ''}${exact.digits}e${exact.exponent}`);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * The amount of `resource` that `quantity` asks for, in the integer units of {@link Resources}:
 * cpu in millicores, anything else in base units, rounded up as Go's MilliValue() and Value()
 * do ("1.5m" cpu -> 2, "0.5" memory -> 1). Undefined when the quantity does not parse, is
 * negative (the API server rejects negative requests) or does not fit a finite number.
 */
export function resourceAmount(resource: string, quantity: string): number | undefined {
  const exact = parseExact(quantity);
  if (!exact || (exact.negative && exact.digits !== 0n)) return undefined;
  const scaled = ceilScaled(exact.digits, exact.exponent + (resource === 'cpu' ? 3 : 0));
  const amount = Number(scaled);
  return Number.isFinite(amount) ? amount : undefined;
}

const binaryUnits: readonly (readonly [string, number])[] = [
  ['Ei', 2 ** 60],
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];

/** Resources counted in bytes, which read best in binary units. */
function isByteResource(resource: string): boolean {
  return resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-');
}

/**
 * An amount from {@link Resources} as a quantity a person would write, for messages:
 * cpu as "500m" or "4" (whole cores), byte resources (memory, ephemeral-storage,
 * hugepages-*) in the largest binary unit that divides the amount exactly ("4Gi",
 * "1536Mi", else plain bytes), anything else as the integer itself. The text re-parses
 * (resourceAmount) to the same amount.
 */
export function formatResourceAmount(resource: string, amount: number): string {
  // Also turns -0 into "0".
  if (amount === 0 || !Number.isInteger(amount)) return String(amount === 0 ? 0 : amount);
  if (resource === 'cpu') return amount % 1000 === 0 ? String(amount / 1000) : `${amount}m`;
  if (isByteResource(resource)) {
    for (const [unit, size] of binaryUnits) {
      if (amount % size === 0) return `${amount / size}${unit}`;
    }
  }
  return String(amount);
}

/** Every resource of either map, summed; a resource missing from one side counts as 0. */
export function addResources(a: Resources, b: Resources): Resources {
  return combine(a, b, (x, y) => x + y);
}

/** `a` minus `b` for every resource of either map; a resource missing from one side counts as 0. */
export function subtractResources(a: Resources, b: Resources): Resources {
  return combine(a, b, (x, y) => x - y);
}

function combine(a: Resources, b: Resources, operation: (x: number, y: number) => number): Resources {
  // Plain loops: placement and the capacity cache combine maps many times per decision, and the
  // Set, arrays and entries of a functional version were most of its cost.
  const out: Resources = {};
  for (const name of Object.keys(a)) setAmount(out, name, operation(amountOf(a, name), amountOf(b, name)));
  for (const name of Object.keys(b)) {
    if (!Object.hasOwn(a, name)) setAmount(out, name, operation(0, amountOf(b, name)));
  }
  return out;
}

/** Defines the amount as an own data property, so even a resource named "__proto__" stays data. */
function setAmount(resources: Resources, name: string, amount: number): void {
  if (name === '__proto__')
    Object.defineProperty(resources, name, {
      value: amount,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else resources[name] = amount;
}

function amountOf(resources: Resources, name: string): number {
  return Object.hasOwn(resources, name) ? (resources[name] ?? 0) : 0;
}

/**
 * The names (sorted) of the resources `request` needs more of than `free` has. A resource
 * missing from `free` has 0 free; a request of 0 always fits, even where free is negative.
 */
export function fitsIn(request: Resources, free: Resources): string[] {
  return Object.keys(request)
    .filter((name) => {
      const wanted = amountOf(request, name);
      return wanted > 0 && wanted > amountOf(free, name);
    })
    .sort(compareNames);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `resources` times `n`: what n pods of the same shape request together. */
export function scaleResources(resources: Resources, n: number): Resources {
  return Object.fromEntries(Object.entries(resources).map(([name, amount]) => [name, amount * n]));
}
