import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { putScopeProgress, scopeProgress } from './scopes.ts';

describe('scope progress against dynalite', () => {
  const tables = useTestTables();

  it('keeps scope progress per account', async () => {
    const t = await tables.fresh();
    await putScopeProgress(t, 'prod', { scope: { group: '', kind: 'Pod', namespace: '' }, resourceVersion: '7', objects: 3, cluster: 'https://a:6443', at: 100 });
    await putScopeProgress(t, 'prod', { scope: { group: 'apps', kind: 'Deployment', namespace: 'a' }, resourceVersion: '9', objects: 1, cluster: 'https://a:6443', at: 200 });
    expect(await scopeProgress(t, 'prod')).toEqual([
      { scope: { group: 'apps', kind: 'Deployment', namespace: 'a' }, resourceVersion: '9', objects: 1, cluster: 'https://a:6443', at: 200 },
      { scope: { group: '', kind: 'Pod', namespace: '' }, resourceVersion: '7', objects: 3, cluster: 'https://a:6443', at: 100 },
    ]);
  });
});
