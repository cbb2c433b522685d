/**
 * docs/troubleshooting.md quotes messages word for word: each quoted piece below is in the guide and
 * in the file that writes it, so a message reworded in the code fails here until the guide follows.
 * Placeholders (`<name>`) stand where the code puts a value, so the pieces are the text between them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const guide = readFileSync(resolve(ROOT, 'docs/troubleshooting.md'), 'utf8');

const QUOTED: [source: string, pieces: string[]][] = [
  ['functions/auth/authenticator.ts', ['a valid bearer token is required']],
  ['functions/problem.ts', ['Authentication required', 'Conflict with the current state']],
  [
    'functions/auth/access.ts',
    ['managing accounts needs an account-manager role', 'it lists no usable permissions, so only account managers may write to it (api.auth.openAccounts is readOnly)'],
  ],
  ['functions/accounts/service.ts', ['no active agent session ', ': an agent must be connected before accounts can be activated there', 'in any zone']],
  ['agent/clusters/errors.ts', [' on the cluster of account ']],
  ['agent/clusters/kubeconfig.ts', [' cannot be read: ']],
  ['agent/accounts/holder.ts', ['the kubeconfig reference is not allowed or not usable on agent ', "; see the agent's log", 'the kubeconfig of an assigned account cannot be used: ', 'assignment refused: ']],
  [
    'agent/clusters/assigned-kubeconfig.ts',
    [' cannot be resolved: ', '.kubeconfigDirs', ' (it resolves to ', '.secretReferences', '.execCommands', ' (not found)', ', which an assigned account may not set', ' must be an absolute path for an assigned account', ' is not a regular file'],
  ],
  ['agent/connection/component.ts', ['not connected to the driver: ', 'not connected to the driver yet']],
  ['agent/connection/connection.ts', ['driver stream ended: ']],
  ['agent/zone/zone.ts', ['zone id from the environment']],
  ['driver/credentials.ts', ['bearer token not accepted']],
  ['driver/hello-policy.ts', ['hello refused: ', ' may not serve zone ', ' may not use agent id ', ' may not define static account']],
  ['driver/session-store.ts', [' belongs to another identity until its session has ended and the hand-over grace has passed', ' is being bound by another session; try again']],
  ['driver/server.ts', [' holds the most streams it may on this replica (auth.maxStreamsPerIdentity ', 'this driver replica holds the most agent streams it may (grpc.maxStreams ']],
  ['deploy/helm/vendor-agent/templates/configmap.yaml', ["set config.driver.grpc to the driver's gRPC endpoint (host:port): the grpc output of sst deploy"]],
  ['deploy/helm/vendor-agent/templates/tests/readyz.yaml', ["'NOT READY'", 'no agent pod behind ']],
];

describe('docs/troubleshooting.md', () => {
  for (const [source, pieces] of QUOTED) {
    it(`quotes ${source} as it writes its messages`, () => {
      const code = readFileSync(resolve(ROOT, source), 'utf8');
      for (const piece of pieces) {
        expect(code, `${source} no longer writes ${JSON.stringify(piece)}`).toContain(piece);
        expect(guide, `the guide does not quote ${JSON.stringify(piece)}`).toContain(piece.replace(/^'|'$/g, ''));
      }
    });
  }
});
