// client-node's ObjectSerializer turns JSON into typed models (and back) by re-reading a type
// string ("Array<V1Container>", "{ [key: string]: string; }") at every node of every object, and
// its serialize writes a key for every attribute a model has, set or not. Every Job the
// controller reads, watches or writes goes through it: about a fifth of the controller's CPU
// in the dispatch benchmark. Here each (type, format) is compiled once into a pair of plain
// functions that do what the original does, node for node, and those are installed over the
// original's static methods, which the generated clients call by name.
// compiled-serializer.test.ts holds the two equal on objects generated from the models'
// own attribute maps.
import * as generated from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';

const { ObjectSerializer } = generated;

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}
interface ModelClass {
  new (): Record<string, unknown>;
  getAttributeTypeMap(): Attribute[];
  discriminator?: string;
}
interface Codec {
  deserialize(data: unknown): unknown;
  serialize(data: unknown): unknown;
}

// The original's own constants (ObjectSerializer.js); the models define no enums.
const primitives = new Set(['string', 'boolean', 'double', 'integer', 'long', 'float', 'number', 'any']);
const nullableSuffix = ' | null';
const optionalSuffix = ' | undefined';
const arrayPrefix = 'Array<';
const mapPrefix = '{ [key: string]: ';
const mapSuffix = '; }';

type Convert = (data: unknown, type: string, format: string) => unknown;
/** The original statics, as loaded (they recurse through ObjectSerializer by name). */
export const originalSerializer: { deserialize: Convert; serialize: Convert } = {
  deserialize: ObjectSerializer.deserialize,
  serialize: ObjectSerializer.serialize,
};
const originalDeserialize = (data: unknown, type: string, format: string) =>
  originalSerializer.deserialize.call(ObjectSerializer, data, type, format);
const originalSerialize = (data: unknown, type: string, format: string) =>
  originalSerializer.serialize.call(ObjectSerializer, data, type, format);

function modelClass(type: string): ModelClass | undefined {
  const candidate = (generated as unknown as Record<string, unknown>)[type];
  return typeof candidate === 'function' && 'getAttributeTypeMap' in candidate
    ? (candidate as unknown as ModelClass)
    : undefined;
}

const identity: Codec = { deserialize: (data) => data, serialize: (data) => data };
const codecs = new Map<string, Codec>();

export function codecFor(type: string, format: string): Codec {
  const key = `${type}\u0000${format}`;
  let codec = codecs.get(key);
  if (!codec) {
    codec = compile(type, format);
    codecs.set(key, codec);
  }
  return codec;
}

/**
 * The slots of the string cache below: a direct-mapped table, so its memory is fixed (8192
 * references) and a miss simply replaces the slot.
 */
const internSlots: Array<string | undefined> = new Array(8192).fill(undefined);
const internMask = internSlots.length - 1;

/**
 * The same string, shared when an equal one was seen recently. Every cached Job repeats the
 * same short values (its namespace, image, "IfNotPresent", "ClusterFirst", its UID four times
 * over in labels and selectors), and JSON.parse makes a fresh copy of each: with 10,000 Jobs
 * and their mirrors tracked, 400,000 such strings (17 MiB). The result is always equal to the
 * argument; only which copy is kept changes. Long strings are rarely repeated and cost more to
 * hash: they pass through.
 */
export function internString(value: string): string {
  const length = value.length;
  if (length > 64) return value;
  // FNV-1a over the UTF-16 code units; collisions only cost a miss.
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
  const slot = (hash >>> 0) & internMask;
  const seen = internSlots[slot];
  if (seen === value) return seen;
  internSlots[slot] = value;
  return value;
}

const stringCodec: Codec = {
  deserialize: (data) => (typeof data === 'string' ? internString(data) : data),
  serialize: (data) => data,
};

function compile(type: string, format: string): Codec {
  if (type === 'string') return stringCodec;
  if (primitives.has(type.toLowerCase())) return identity;
  if (type.endsWith(nullableSuffix)) return codecFor(type.slice(0, -nullableSuffix.length), format);
  if (type.endsWith(optionalSuffix)) return codecFor(type.slice(0, -optionalSuffix.length), format);
  if (type.startsWith(arrayPrefix)) {
    const item = lazyCodec(type.slice(arrayPrefix.length, -1), format);
    return {
      deserialize: (data) => {
        if (data == null) return data;
        const out: unknown[] = [];
        for (const element of data as Iterable<unknown>) out.push(item().deserialize(element));
        return out;
      },
      serialize: (data) => {
        if (data == null) return data;
        const out: unknown[] = [];
        for (const element of data as Iterable<unknown>) out.push(item().serialize(element));
        return out;
      },
    };
  }
  if (type.startsWith(mapPrefix)) {
    const value = lazyCodec(type.slice(mapPrefix.length, -mapSuffix.length), format);
    const each = (data: unknown, convert: (v: unknown) => unknown) => {
      if (data == null) return data;
      const out: Record<string, unknown> = {};
      for (const key in data as Record<string, unknown>)
        out[key] = convert((data as Record<string, unknown>)[key]);
      return out;
    };
    return {
      deserialize: (data) => each(data, (v) => value().deserialize(v)),
      serialize: (data) => each(data, (v) => value().serialize(v)),
    };
  }
  if (type === 'Date') {
    return {
      deserialize: (data) => (data == null ? data : new Date(data as string)),
      // Dates in 'date' format, and anything that is not a Date, go the original's way.
      serialize: (data) =>
        data instanceof Date && format !== 'date'
          ? data.toISOString()
          : originalSerialize(data, type, format),
    };
  }
  const model = modelClass(type);
  // Unknown types pass through; a model with a discriminator (none today) keeps the original.
  if (!model) return identity;
  if (model.discriminator != null)
    return {
      deserialize: (data) => originalDeserialize(data, type, format),
      serialize: (data) => originalSerialize(data, type, format),
    };
  let attributes: Array<Attribute & { codec: Codec }> | undefined;
  const attributesOf = () => {
    attributes ??= model.getAttributeTypeMap().map((a) => ({ ...a, codec: codecFor(a.type, a.format) }));
    return attributes;
  };
  return {
    deserialize: (data) => {
      if (data == null) return data;
      const instance = new model();
      const source = data as Record<string, unknown>;
      for (const attribute of attributesOf()) {
        const raw = source[attribute.baseName];
        if (raw === undefined) continue;
        const value = attribute.codec.deserialize(raw);
        if (value !== undefined) instance[attribute.name] = value;
      }
      return instance;
    },
    serialize: (data) => {
      if (data == null) return data;
      const out: Record<string, unknown> = {};
      const source = data as Record<string, unknown>;
      // The original writes every attribute, unset ones as undefined; JSON drops those, and
      // nothing reads the serialised object but JSON.stringify, so they are left out here.
      for (const attribute of attributesOf()) {
        const raw = source[attribute.name];
        if (raw !== undefined) out[attribute.baseName] = attribute.codec.serialize(raw);
      }
      return out;
    },
  };
}

/** Recursive models (JSONSchemaProps) refer to themselves: resolve a codec on first use. */
function lazyCodec(type: string, format: string): () => Codec {
  let codec: Codec | undefined;
  return () => {
    codec ??= codecFor(type, format);
    return codec;
  };
}

let installed = false;

/** Puts the compiled codecs in place of ObjectSerializer's own (once, process-wide). */
export function installCompiledSerializer(): void {
  if (installed) return;
  installed = true;
  ObjectSerializer.deserialize = (data: unknown, type: string, format: string) =>
    codecFor(type, format).deserialize(data) as never;
  ObjectSerializer.serialize = (data: unknown, type: string, format: string) =>
    codecFor(type, format).serialize(data) as never;
}
