import { describe, expect, it } from 'vitest';
import { seedCluster, startTestApiServer } from './index.ts';

describe('seedCluster', () => {
  it('names every pod once even when the random suffix repeats', async () => {
    const server = await startTestApiServer();
    try {
      // The same suffix for the first 200 draws: the 46th pod has the first one's owner, and so its name.
      let draws = 0;
      const podSuffix = () => (draws++ < 200 ? 'aaaaa' : draws.toString(16).padStart(5, '0'));
      const seeded = await seedCluster(server.store, { objects: 300, namespaces: 1, podSuffix });
      expect(seeded.created.Pod).toBe(120);
      const pods = server.store.list({ apiVersion: 'v1', kind: 'Pod' });
      expect(pods).toHaveLength(120);
      expect(new Set(pods.map((p) => p.metadata.name)).size).toBe(120);
      expect(draws).toBeGreaterThan(200);
    } finally {
      await server.close();
    }
  });
});
