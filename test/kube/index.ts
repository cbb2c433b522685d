/**
 * The test Kubernetes API server: test code, for the project's suites and benchmarks only.
 * Start one with `startTestApiServer()`; see docs/test-api-server.md.
 */
export { startTestApiServer } from './server.ts';
export type { KubeconfigOptions, RequestLog, TestApiServer, TestApiServerOptions } from './server.ts';
export type { TestStore, ObjectInput, ObjectRef, ListSelector } from './test-store.ts';
export type { TestFaults } from './test-faults.ts';
export type { FaultAction, FaultMatch, FaultRule } from './faults.ts';
export type { WatchFilter } from './watch.ts';
export type { AuthOptions, Authorizer, RequestAttributes, UserInfo } from './auth.ts';
export type { PodMetrics, ContainerUsage } from './pod-metrics.ts';
export type { RequestRecord } from './http.ts';
export type { KubeconfigDocument } from './kubeconfig.ts';
export type { KubeObject, JsonObject, JsonValue } from './objects.ts';
export type { Status } from './status.ts';
export { isStatusError, StatusError } from './status.ts';
export { createCertificateAuthority } from '../support/pki.ts';
export type { CertificateAuthority, KeyPair } from '../support/pki.ts';
export { churn, seedCluster } from './seed.ts';
export type { ChurnOptions, ChurnResult, SeedOptions, SeedResult } from './seed.ts';
