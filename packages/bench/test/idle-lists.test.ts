import { describe, expect, it } from 'vitest';
import { parseRequestCounts } from '../src/apiserver-requests.ts';
import { listsByResource } from '../src/fleet-scale.ts';

// Series as kube-apiserver's /metrics writes them: one per code, scope and component.
const metrics = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="services",scope="cluster",subresource="",verb="LIST",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch",resource="jobs",scope="cluster",subresource="",verb="LIST",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 9
`;

describe('listsByResource', () => {
  it("counts LISTs per resource and sets the control plane's own Service repair loop apart", () => {
    expect(listsByResource(parseRequestCounts(metrics))).toEqual({
      anyClient: { pods: 4, 'batch/jobs': 4 },
      controlPlane: { services: 2 },
    });
  });
});
