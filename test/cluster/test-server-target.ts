import { randomBytes } from 'node:crypto';
import { startTestApiServer, type TestApiServerOptions, type UserInfo } from '../kube/index.ts';
import type { ClusterTarget, TargetProvider } from './target.ts';

const ADMIN = { username: 'vendor-admin', groups: ['system:masters'] };
const NOBODY = 'vendor-nobody';

/**
 * RBAC as a cluster without extra roles has it: `system:masters` may do everything, nobody else
 * anything on resources. (The default roles that let every user read discovery, `/version` and the
 * health paths are not resource rules, so they need no entry here.)
 */
function onlyMasters(user: UserInfo): boolean {
  return user.groups.includes('system:masters');
}

/**
 * The project's test API server (`test/kube/`) as a scenario target, set up as the real-cluster
 * suite sets up kube-apiserver: HTTPS with its own CA, a static admin token and an admin client
 * certificate in `system:masters`, an unprivileged token user, anonymous requests let in to be
 * refused by RBAC. `expireHistory()` is its compaction knob. `options` picks a mode, for example
 * `{ watchList: false }` to answer watches as Kubernetes 1.20 does.
 */
export function testApiServer(name = 'test API server', options: Omit<TestApiServerOptions, 'tls' | 'auth' | 'authorize'> = {}): TargetProvider {
  return {
    name,
    availability: () => ({ available: true }),
    async start() {
      const adminToken = randomBytes(16).toString('hex');
      const nobodyToken = randomBytes(16).toString('hex');
      const server = await startTestApiServer({
        // kube-apiserver waits about 3 s for a version it has not reached; the scenarios check the
        // answer, not the wait, so the test server gives up sooner.
        tooLargeResourceVersionWaitMs: 250,
        ...options,
        tls: true,
        auth: { tokens: { [adminToken]: ADMIN, [nobodyToken]: NOBODY }, clientCertificates: true, anonymous: true },
        authorize: onlyMasters,
      });
      const ca = server.ca;
      if (ca === undefined) throw new Error('the test API server started without TLS');
      const adminCert = server.issueClientCertificate(ADMIN.username, ADMIN.groups);
      const target: ClusterTarget = {
        name,
        url: server.url,
        tls: { caCert: ca },
        auth: {
          admin: { kind: 'token', token: adminToken },
          adminCert: { kind: 'clientCert', cert: adminCert.cert, key: adminCert.key },
          unprivileged: { kind: 'token', token: nobodyToken, user: NOBODY },
        },
        knobs: {
          async expireHistory() {
            server.faults.expireHistory();
          },
        },
      };
      return { target, close: () => server.close() };
    },
  };
}
