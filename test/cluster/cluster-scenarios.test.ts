import { realKubeApiserver } from './real-target.ts';
import { describeClusterScenarios } from './run-scenarios.ts';
import { testApiServer } from './test-server-target.ts';

// Every target the cluster scenarios hold to the same behaviour; one line per server. The test API
// server runs twice: as a current server (WatchList served) and as 1.20 answers watches.
for (const provider of [
  realKubeApiserver(),
  testApiServer('test API server'),
  testApiServer('test API server (as 1.20)', { kubernetesVersion: '1.20.2', watchList: false }),
]) describeClusterScenarios(provider);
