export {
  describeLabelSelector,
  type LabelRequirement,
  type LabelSelector,
  labelKeyProblem,
  labelsMatch,
  labelValueProblem,
  parseLabelSelector,
} from './label-selector.ts';
export { type PodResourceFields, podRequests } from './pod-requests.ts';
export {
  addResources,
  fitsIn,
  formatResourceAmount,
  parseQuantity,
  type Resources,
  resourceAmount,
  scaleResources,
  subtractResources,
} from './resource-quantity.ts';
