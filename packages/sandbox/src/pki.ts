import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SandboxPki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/** Names the serving certificate answers to: loopback, and the in-cluster service names. */
const servingSubjectAltNames = [
  'DNS:localhost',
  'DNS:kubernetes',
  'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc',
  'DNS:kubernetes.default.svc.cluster.local',
  'IP:127.0.0.1',
  'IP:10.0.0.1',
];

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'openssl is not on PATH: install it (apt-get install -y openssl) to create the sandbox PKI',
      );
    }
    throw new Error(`openssl ${args[0]} failed: ${stderr}`);
  }
}

/**
 * One CA, one serving certificate for every apiserver (they all listen on 127.0.0.1) and
 * one service-account key pair, as kwokctl does. Created once per sandbox; Node cannot mint
 * X.509 certificates by itself, so this shells out to openssl.
 */
export function ensurePki(dir: string): SandboxPki {
  mkdirSync(dir, { recursive: true });
  const pki: SandboxPki = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'service-account.key'),
    serviceAccountPub: join(dir, 'service-account.pub'),
  };
  if (Object.values(pki).every((path) => existsSync(path))) return pki;

  openssl(['genrsa', '-out', 'ca.key', '2048'], dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-subj',
      '/CN=jobrelay-sandbox-ca',
      '-days',
      '3650',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  openssl(['genrsa', '-out', 'apiserver.key', '2048'], dir);
  writeFileSync(
    join(dir, 'apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      `subjectAltName=${servingSubjectAltNames.join(',')}`,
    ].join('\n'),
  );
  openssl(
    ['req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr'],
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'apiserver.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      'apiserver.ext',
      '-out',
      'apiserver.crt',
    ],
    dir,
  );
  openssl(['genrsa', '-out', 'service-account.key', '2048'], dir);
  openssl(['rsa', '-in', 'service-account.key', '-pubout', '-out', 'service-account.pub'], dir);
  return pki;
}
