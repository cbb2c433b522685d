import { realKubeApiserver } from './real-target.ts';
import { describeClusterScenarios } from './run-scenarios.ts';
import { testApiServer } from './test-server-target.ts';

// Every target the cluster scenarios hold to the same behaviour; one line per server. The test API
// server runs twice: as a current server (WatchList, bookmarks of quiet kinds) and answering watches
// as 1.20 does, so both branches of the scenarios that depend on the version are held to something.
for (const provider of [
  realKubeApiserver(),
  testApiServer('test API server'),
  testApiServer('test API server (as 1.20)', { kubernetesVersion: '1.20.2', watchList: false, watchCacheProgress: false }),
]) describeClusterScenarios(provider);
