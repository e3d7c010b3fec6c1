import { describe, expect, it } from 'vitest';
import { coresOver, describeCores, describeParts, fleetCpuPerJob, fleetPart } from '../src/fleet-cpu.ts';

describe('fleetPart', () => {
  it('keeps the management apiserver apart from the workers', () => {
    expect(fleetPart('management/kube-apiserver')).toBe('apiserver (management)');
    expect(fleetPart('worker-1/kube-apiserver')).toBe('apiservers (workers)');
    expect(fleetPart('worker-3/kube-apiserver')).toBe('apiservers (workers)');
  });

  it('groups the other processes by program, whatever their cluster', () => {
    expect(fleetPart('worker-2/kube-controller-manager')).toBe('kube-controller-manager');
    expect(fleetPart('management/kwok')).toBe('kwok');
    expect(fleetPart('etcd')).toBe('etcd');
    expect(fleetPart('redis')).toBe('redis');
  });
});

describe('fleetCpuPerJob', () => {
  it('divides each part by the Jobs, counting a part first seen afterwards from zero', () => {
    const perJob = fleetCpuPerJob(
      { etcd: 1_000, controller: 500, machineBusy: 10_000 },
      { etcd: 1_500, controller: 1_500, machineBusy: 13_000, redis: 40 },
      200,
    );
    expect(perJob).toEqual({ etcd: 2.5, controller: 5, machineBusy: 15, redis: 0.2 });
  });
});

describe('describeParts', () => {
  it('names the machine total, then the parts largest first', () => {
    expect(describeParts({ redis: 0.4, machineBusy: 9, controller: 5.25, etcd: 2 })).toBe(
      'machine 9.00 = controller 5.25, etcd 2.00, redis 0.40, other processes the rest',
    );
  });
});

describe('coresOver', () => {
  it('divides each part by the wall time, counting a part first seen afterwards from zero', () => {
    const cores = coresOver(
      { etcd: 1_000, machineBusy: 10_000 },
      { etcd: 1_500, machineBusy: 26_000, jobrelay: 2_000 },
      10_000,
    );
    expect(cores).toEqual({ etcd: 0.05, machineBusy: 1.6, jobrelay: 0.2 });
  });
});

describe('describeCores', () => {
  it('names the machine total, then the parts largest first, in cores', () => {
    expect(describeCores({ etcd: 0.05, machineBusy: 1.6, jobrelay: 0.2 })).toBe(
      'machine 1.60 = jobrelay 0.200, etcd 0.050, other processes the rest',
    );
  });
});
