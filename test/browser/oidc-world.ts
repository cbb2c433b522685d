/**
 * The real parts of the console's OIDC browser suite: the control plane as `npm start` runs it (with
 * the console built first), configured for the test OpenID Provider (oidc-provider, test/support/
 * oidc-provider.ts) and its public client, two driver-defined accounts with READ permissions for
 * different roles, and a manager role.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConsole } from '../../scripts/build-console.ts';
import { TestOpenIdProvider } from '../support/oidc-provider.ts';
import { PLANE_TOKEN, planeHttp, startPlane, stopAll, stopPlane, type RunningPlane } from '../support/control-plane-process.ts';

/** The API's audience, asked for by the console as its resource indicator. */
export const API_AUDIENCE = 'urn:vendor-agent:api';

/** Users of the provider: a READ-only caller of team-a, and an account manager. */
export const OIDC_USERS = { reader: ['team-a-readers'], manager: ['vendor-admins'] };

export interface OidcWorld {
  plane: RunningPlane;
  op: TestOpenIdProvider;
  close(): Promise<void>;
}

export async function startOidcWorld(): Promise<OidcWorld> {
  await buildConsole();
  // The issuer goes into the plane's file; the plane's URL, the redirect URI, is known once it runs.
  const op = await TestOpenIdProvider.listen();
  const dir = mkdtempSync(join(tmpdir(), 'console-oidc-'));
  writeFileSync(
    join(dir, 'vendor-driver.yml'),
    [
      'api:',
      '  auth:',
      `    adminToken: ${PLANE_TOKEN}`,
      '    oidc:',
      `      issuer: ${op.url}`,
      `      audience: ${API_AUDIENCE}`,
      `      clientId: ${op.clientId}`,
      `      resource: ${API_AUDIENCE}`,
      '    accountManagerRoles: [vendor-admins]',
      'kubernetes:',
      '  accounts:',
      '    - name: team-a',
      '      permissions:',
      '        - READ: [team-a-readers]',
      '    - name: team-b',
      '      permissions:',
      '        - READ: [team-b-readers]',
      '',
    ].join('\n'),
  );
  const plane = await startPlane(dir);
  await op.configure({ redirectUris: [`${plane.url}/ui/`], users: OIDC_USERS, resources: [API_AUDIENCE] });
  const registered = await planeHttp(`${plane.url}/vendor/accounts`, 'POST', [{ name: 'team-a' }]);
  if (registered.status !== 200) throw new Error(`registering team-a answered ${registered.status}: ${JSON.stringify(registered.json)}`);
  return {
    plane,
    op,
    close: async () => {
      await stopPlane(plane.child);
      stopAll();
      await op.close();
    },
  };
}
