import { realKubeApiserver } from './real-target.ts';
import { describeClusterScenarios } from './run-scenarios.ts';

// Every target the cluster scenarios hold to the same behaviour; one line per server.
for (const provider of [realKubeApiserver()]) describeClusterScenarios(provider);
