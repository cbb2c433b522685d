import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { progressSk } from './keys.ts';
import { putScopeProgress, putScopesSeen, scopeProgress } from './scopes.ts';

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

  it('takes a progress record as recent as its unchanged version was last seen, for the same cluster only', async () => {
    const t = await tables.fresh();
    const pod = { group: '', kind: 'Pod', namespace: '' };
    const deploy = { group: 'apps', kind: 'Deployment', namespace: 'a' };
    const job = { group: 'batch', kind: 'Job', namespace: '' };
    await putScopeProgress(t, 'prod', { scope: pod, resourceVersion: '7', objects: 3, cluster: 'https://a:6443', at: 100 });
    await putScopeProgress(t, 'prod', { scope: deploy, resourceVersion: '9', objects: 1, cluster: 'https://a:6443', at: 200 });
    await putScopeProgress(t, 'prod', { scope: job, resourceVersion: '4', objects: 0, cluster: 'https://a:6443', at: 300 });
    await putScopesSeen(t, 'prod', {
      // Seen since, as stored: the record is that recent.
      [progressSk(pod)]: { rv: '7', cluster: 'https://a:6443', at: 5_000 },
      // Another version seen than the one stored, or another cluster's: the record keeps its own time.
      [progressSk(deploy)]: { rv: '10', cluster: 'https://a:6443', at: 5_000 },
      [progressSk(job)]: { rv: '4', cluster: 'https://b:6443', at: 5_000 },
      // A scope with no progress stored: nothing comes of it.
      [progressSk({ group: '', kind: 'Secret', namespace: '' })]: { rv: '1', cluster: 'https://a:6443', at: 5_000 },
    });
    expect(await scopeProgress(t, 'prod')).toEqual([
      { scope: deploy, resourceVersion: '9', objects: 1, cluster: 'https://a:6443', at: 200 },
      { scope: job, resourceVersion: '4', objects: 0, cluster: 'https://a:6443', at: 300 },
      { scope: pod, resourceVersion: '7', objects: 3, cluster: 'https://a:6443', at: 5_000 },
    ]);
  });
});
