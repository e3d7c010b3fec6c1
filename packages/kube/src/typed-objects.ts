// The generated client deserialises list/read responses into typed models (timestamps as
// Date), but watch events arrive as plain JSON. Everything our informers hand out goes
// through the same converters, so a Job from a watch and a Job from a read compare equal.
// client-node does not export its serialiser from the package root; compiled-serializer.ts
// is the one place that reaches into it.
import { codecFor, installCompiledSerializer } from './compiled-serializer.ts';

// Every process that imports @jobrelay/kube (controller, API, CLI tools) converts objects
// with the compiled codecs, the generated clients included; see compiled-serializer.ts.
installCompiledSerializer();

export function deserialize<T>(raw: unknown, modelName: string): T {
  return codecFor(modelName, '').deserialize(raw) as T;
}

export function serialize(object: unknown, modelName: string): unknown {
  return codecFor(modelName, '').serialize(object);
}
