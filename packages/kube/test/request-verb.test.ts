import { describe, expect, it } from 'vitest';
import { requestVerb } from '../src/request-verb.ts';

describe('requestVerb', () => {
  it.each([
    ['GET', 'https://h/apis/batch/v1/namespaces/team-a/jobs', 'list'],
    ['GET', 'https://h/apis/batch/v1/jobs?labelSelector=a%3Db', 'list'],
    ['GET', 'https://h/apis/batch/v1/namespaces/team-a/jobs?watch=true&resourceVersion=5', 'watch'],
    ['GET', 'https://h/apis/batch/v1/namespaces/team-a/jobs/j1', 'get'],
    ['GET', 'https://h/apis/batch/v1/namespaces/team-a/jobs/j1/status', 'get'],
    ['GET', 'https://h/api/v1/namespaces', 'list'],
    ['GET', 'https://h/api/v1/namespaces/kube-system', 'get'],
    ['GET', 'https://h/api/v1/namespaces/kube-system/status', 'get'],
    ['GET', 'https://h/api/v1/namespaces/team-a/pods', 'list'],
    ['GET', 'https://h/api/v1/namespaces/team-a/pods/p/log', 'get'],
    ['GET', 'https://h/api/v1/nodes', 'list'],
    ['GET', 'https://h/apis/ray.io/v1/namespaces/n/rayclusters/r', 'get'],
    ['GET', 'https://h/version', 'get'],
    ['POST', 'https://h/apis/batch/v1/namespaces/team-a/jobs', 'create'],
    ['POST', 'https://h/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'create'],
    ['PUT', 'https://h/apis/batch/v1/namespaces/team-a/jobs/j1/status', 'update'],
    ['PATCH', 'https://h/apis/batch/v1/namespaces/team-a/jobs/j1', 'patch'],
    ['DELETE', 'https://h/apis/batch/v1/namespaces/team-a/jobs/j1', 'delete'],
    ['DELETE', 'https://h/apis/batch/v1/namespaces/team-a/jobs', 'deletecollection'],
    ['HEAD', 'https://h/healthz', 'head'],
  ])('%s %s is %s', (method, url, verb) => {
    expect(requestVerb(method, url)).toBe(verb);
  });
});
