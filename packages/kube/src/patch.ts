import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

/**
 * Options for a JSON merge patch call. Without an explicit Content-Type the generated client
 * sends JSON Patch, which would reject our merge documents.
 */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
