import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { KUBECONFIG_CONTENTS_PROBLEM, kubeconfigReferenceProblem, kubeconfigReferenceSchema } from './kubeconfig-reference.ts';

const TOKEN = 's3cr3t-token-0123456789';

describe('kubeconfig references', () => {
  it('accepts file paths and well-formed secret references', () => {
    for (const ok of [
      '/etc/vendor/kubeconfigs/prod.yml',
      'kubeconfigs/prod.yml',
      '/k/with space/prod.yml',
      'C:\\kube\\config',
      '/k/a:b',
      'encrypted:vault!e:secret!p:kube/prod!k:path',
      'encryptedFile:vault!e:secret!p:kube/prod!k:kubeconfig!b:true',
      'encryptedFile:secrets-manager!r:eu-west-1!s:arn:aws:secretsmanager:eu-west-1:123456789012:secret:kube',
    ]) {
      expect(kubeconfigReferenceProblem(ok), ok).toBeUndefined();
    }
  });

  it('refuses kubeconfig contents in every shape: block YAML, flow YAML, JSON, one line with keys', () => {
    for (const contents of [
      `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: ${TOKEN}\n`,
      `{apiVersion: v1, users: [{name: u, user: {token: ${TOKEN}}}]}`,
      `{"apiVersion":"v1","users":[{"name":"u","user":{"token":"${TOKEN}"}}]}`,
      `[{"token":"${TOKEN}"}]`,
      `apiVersion: v1 clusters: [] users: [{user: {token: ${TOKEN}}}]`,
      `token:${TOKEN}`,
      `users:[]`,
      `"/k/prod.yml"`,
      '--- /k/prod.yml',
      '/k/prod.yml\t',
      `encrypted:vault!e:secret!p:kube!k:token: ${TOKEN}`,
    ]) {
      expect(kubeconfigReferenceProblem(contents), contents).toBe(KUBECONFIG_CONTENTS_PROBLEM);
    }
  });

  it('refuses references to engines the project does not have, and malformed references', () => {
    expect(kubeconfigReferenceProblem('encryptedFile:nosuchengine!x:y')).toMatch(/^invalid encryptedFile reference: the engine is not known/);
    expect(kubeconfigReferenceProblem('encrypted:vault!e:secret')).toMatch(/^invalid encrypted reference to engine vault: key "p"/);
    expect(kubeconfigReferenceProblem('')).toBe('must not be empty');
    expect(kubeconfigReferenceProblem(`/${'a'.repeat(5000)}`)).toMatch(/at most 4096/);
  });

  it('the schema never carries the refused value in its issues', () => {
    const result = v.safeParse(kubeconfigReferenceSchema, `{"token":"${TOKEN}"}`);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.issues)).not.toContain(TOKEN);
    expect(v.safeParse(kubeconfigReferenceSchema, 'encryptedFile:nosuchengine!x:y').success).toBe(false);
  });
});
