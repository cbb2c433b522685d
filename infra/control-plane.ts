/**
 * The control plane's AWS resources, built by `sst.config.ts` (SST v3 components):
 *
 * - the table, defined from the same `createTableInput()` that creates the embedded table, so the
 *   deployed keys and indexes cannot drift from the ones the code uses;
 * - the management API: `functions/lambda.ts` on Lambda (Node 24) behind an HTTP API with throttling;
 * - the driver: `driver/main.ts` in a container on ECS Fargate, at least two tasks, behind an
 *   Application Load Balancer that carries gRPC (HTTP/2) and checks `grpc.health.v1.Health/Check`;
 * - wakes (docs/protocol.md#6b-wakes): the API function runs in the VPC, in a security group of its
 *   own, and the driver tasks' group admits UDP (wakes) and TCP (result asks) on the wake port from
 *   that group alone; the secret both sign and check them with is an SST secret linked to both
 *   (docs/deploy.md, "Wakes");
 * - the API's OIDC settings as SST secrets reaching the code through links. Agents hold no
 *   fleet-wide secret: each cluster's token is issued for its own identity through the API once the
 *   control plane runs (docs/deploy.md, "Agent credentials: issue, rotate, revoke").
 *
 * Deploy-time settings come from the environment of `sst deploy` (see docs/deploy.md).
 */
import type { AttributeDefinition, KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { SST_LINKS, type SstLinkName } from '../shared/links.ts';
import { TTL_ATTRIBUTE, createTableInput } from '../shared/table/core/schema.ts';

/** Where the deployment meets the code; the deployment test checks these against the repository. */
export const DEPLOYED = {
  apiHandler: 'functions/lambda.handler',
  /** The built web console, copied beside the handler's bundle where the Lambda reads it (docs/deploy.md#the-web-console). */
  consoleFiles: { from: 'functions/console/dist', to: 'console' },
  driverDockerfile: 'deploy/docker/driver.Dockerfile',
  /** The driver's default gRPC port (`grpc.port` in driver/config.ts), also set in deploy/driver/vendor-driver.aws.yml. */
  driverPort: 9091,
  /**
   * The driver's Prometheus port (`metrics.port`, docs/metrics.md), enabled in
   * deploy/driver/vendor-driver.aws.yml: scraped on the task's address from inside the VPC; the load
   * balancer forwards only `driverPort`.
   */
  driverMetricsPort: 9464,
  /**
   * The driver's wake port (`wake.port`, UDP for wakes and TCP for result asks, docs/protocol.md#6b-wakes), set in
   * deploy/driver/vendor-driver.aws.yml: reached from the API function's security group only.
   */
  driverWakePort: 9092,
  grpcHealthPath: '/grpc.health.v1.Health/Check',
  driverTasks: { min: 2, max: 6 },
  /** Requests per second and burst the HTTP API lets through before answering 429. */
  apiThrottle: { rateLimit: 100, burstLimit: 200 },
  /** Reserved concurrency of the API function on production (caps its share of the account). */
  productionReservedConcurrency: 50,
  /**
   * The driver's environment on every stage: production mode refuses fleet-wide agent tokens and
   * plaintext not behind the load balancer, as the deployed API function always does.
   */
  driverEnvironment: { VENDOR_ENV: 'production' },
} as const;

export interface ControlPlaneInput {
  stage: string;
  env: NodeJS.ProcessEnv;
}

type DynamoField = 'string' | 'number' | 'binary';

const FIELD_TYPES: Record<string, DynamoField> = { S: 'string', N: 'number', B: 'binary' };

function keyOf(schema: KeySchemaElement[] | undefined, type: 'HASH' | 'RANGE'): string | undefined {
  return schema?.find((k) => k.KeyType === type)?.AttributeName;
}

/** SST's `Dynamo` arguments for the table the code creates (keys, attribute types, global indexes). */
export function dynamoArgsFromTable(): Pick<SstDynamoArgs, 'fields' | 'primaryIndex' | 'globalIndexes'> {
  const input = createTableInput('deployed');
  const fields = Object.fromEntries(
    (input.AttributeDefinitions ?? []).map((a: AttributeDefinition) => {
      const type = FIELD_TYPES[a.AttributeType ?? ''];
      if (type === undefined) throw new Error(`table attribute ${a.AttributeName} has unknown type ${a.AttributeType}`);
      return [a.AttributeName, type];
    }),
  );
  const hashKey = keyOf(input.KeySchema, 'HASH');
  if (hashKey === undefined) throw new Error('the table has no partition key');
  const rangeKey = keyOf(input.KeySchema, 'RANGE');
  const globalIndexes = Object.fromEntries(
    (input.GlobalSecondaryIndexes ?? []).map((index) => {
      const indexHash = keyOf(index.KeySchema, 'HASH');
      if (index.IndexName === undefined || indexHash === undefined) throw new Error('a global index without name or partition key');
      const indexRange = keyOf(index.KeySchema, 'RANGE');
      return [index.IndexName, { hashKey: indexHash, ...(indexRange === undefined ? {} : { rangeKey: indexRange }) }];
    }),
  );
  return {
    fields,
    primaryIndex: { hashKey, ...(rangeKey === undefined ? {} : { rangeKey }) },
    ...(Object.keys(globalIndexes).length === 0 ? {} : { globalIndexes }),
  };
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of 0 or more, got "${raw}"`);
  return value;
}

export function controlPlane({ stage, env }: ControlPlaneInput): Record<string, SstInput<string>> {
  const production = stage === 'production';

  const table = new sst.aws.Dynamo(SST_LINKS.table, {
    ...dynamoArgsFromTable(),
    // Change-feed entries carry an expiry in epoch seconds; DynamoDB deletes them after it.
    ttl: TTL_ATTRIBUTE,
    transform: {
      table: (args) => {
        args.pointInTimeRecovery = { enabled: production };
        args.deletionProtectionEnabled = production;
      },
    },
  });

  // Set with `sst secret set <name> <value> --stage <stage>` before the first deploy.
  const oidcIssuer = new sst.Secret(SST_LINKS.oidcIssuer);
  const oidcAudience = new sst.Secret(SST_LINKS.oidcAudience);
  const oidcRolesClaim = new sst.Secret(SST_LINKS.oidcRolesClaim, 'groups');
  const accountManagerRoles = new sst.Secret(SST_LINKS.accountManagerRoles);
  // The console's OIDC sign-in: off until a client id is set; empty placeholders mean none.
  const oidcClientId = new sst.Secret(SST_LINKS.oidcClientId, '');
  const oidcScopes = new sst.Secret(SST_LINKS.oidcScopes, '');
  const oidcResource = new sst.Secret(SST_LINKS.oidcResource, '');
  // Accounts without usable permissions are readable by every caller and writable by managers only;
  // `readWrite` opens them to every caller's writes too.
  const openAccounts = new sst.Secret(SST_LINKS.openAccounts, 'readOnly');
  // Signs the API's wakes and checks them on the driver (at least 32 characters; no default, since a
  // known one would let anyone inside the VPC wake the replicas).
  const wakeSecret = new sst.Secret(SST_LINKS.wakeSecret);

  // The VPC holds the driver tasks and, so that its wakes reach their private addresses, the API
  // function. A function in a VPC reaches the internet (the OIDC issuer's keys) and DynamoDB only
  // through NAT: one small NAT instance per zone is the cheap way (docs/deploy.md, "Wakes").
  const vpc = new sst.aws.Vpc('VendorVpc', { az: 2, nat: 'ec2' });
  const apiSecurityGroup = new aws.ec2.SecurityGroup('VendorApiSecurityGroup', {
    vpcId: vpc.id,
    description: 'The management API function: nothing comes in; out to the table, the OIDC issuer and the driver tasks wake port (UDP wakes, TCP result asks)',
    egress: [{ protocol: '-1', fromPort: 0, toPort: 0, cidrBlocks: ['0.0.0.0/0'] }],
  });
  // The tasks run in the VPC's own group; this rule is what lets wakes in, whatever else that group allows.
  new aws.vpc.SecurityGroupIngressRule('VendorDriverWakeIngress', {
    securityGroupId: vpc.securityGroups.apply((groups) => groups[0] as string),
    referencedSecurityGroupId: apiSecurityGroup.id,
    ipProtocol: 'udp',
    fromPort: DEPLOYED.driverWakePort,
    toPort: DEPLOYED.driverWakePort,
    description: 'wakes from the management API function',
  });
  // The same port number over TCP: the API's result asks (a waiting request asks the replica whether
  // its operation has finished), from that group alone as well.
  new aws.vpc.SecurityGroupIngressRule('VendorDriverResultAskIngress', {
    securityGroupId: vpc.securityGroups.apply((groups) => groups[0] as string),
    referencedSecurityGroupId: apiSecurityGroup.id,
    ipProtocol: 'tcp',
    fromPort: DEPLOYED.driverWakePort,
    toPort: DEPLOYED.driverWakePort,
    description: 'result asks from the management API function',
  });

  const reserved = positiveInteger(env, 'VENDOR_API_RESERVED_CONCURRENCY') ?? (production ? DEPLOYED.productionReservedConcurrency : 0);
  const apiFunction = new sst.aws.Function('VendorApiFunction', {
    handler: DEPLOYED.apiHandler,
    runtime: 'nodejs24.x',
    architecture: 'arm64',
    memory: '1024 MB',
    timeout: '29 seconds',
    // SST hands a function its links in an encrypted file, which shared/links.ts reads.
    link: [table, oidcIssuer, oidcAudience, oidcRolesClaim, oidcClientId, oidcScopes, oidcResource, accountManagerRoles, openAccounts, wakeSecret],
    copyFiles: [DEPLOYED.consoleFiles],
    vpc: { privateSubnets: vpc.privateSubnets, securityGroups: [apiSecurityGroup.id] },
    ...(reserved > 0 ? { concurrency: { reserved } } : {}),
    logging: { retention: production ? '1 year' : '1 month', format: 'json' },
  });

  const api = new sst.aws.ApiGatewayV2('VendorApi', {
    transform: {
      stage: (args) => {
        args.defaultRouteSettings = {
          ...args.defaultRouteSettings,
          throttlingRateLimit: DEPLOYED.apiThrottle.rateLimit,
          throttlingBurstLimit: DEPLOYED.apiThrottle.burstLimit,
        };
      },
    },
  });
  api.route('$default', apiFunction.arn);

  const driverDomain = env.VENDOR_DRIVER_DOMAIN;
  if (driverDomain === undefined || driverDomain === '') {
    throw new Error(
      'set VENDOR_DRIVER_DOMAIN to the host name agents dial (e.g. grpc.vendor.example.com): a load balancer carries gRPC only over HTTPS, which needs a certificate for a name',
    );
  }
  const certificate = env.VENDOR_DRIVER_CERT_ARN;
  const cluster = new sst.aws.Cluster('VendorCluster', { vpc });
  const target = `${DEPLOYED.driverPort}/http` as const;
  new sst.aws.Service('VendorDriver', {
    cluster,
    image: { context: '.', dockerfile: DEPLOYED.driverDockerfile },
    // The image is built on the deploying machine: x86_64 needs no emulation on the usual one.
    architecture: 'x86_64',
    cpu: '0.5 vCPU',
    memory: '1 GB',
    link: [table, wakeSecret],
    environment: { ...DEPLOYED.driverEnvironment },
    scaling: { min: DEPLOYED.driverTasks.min, max: DEPLOYED.driverTasks.max, cpuUtilization: 60 },
    loadBalancer: {
      // Route 53 names get their certificate and record made; elsewhere give an ACM certificate's ARN.
      domain: certificate ? { name: driverDomain, cert: certificate, dns: false } : driverDomain,
      rules: [{ listen: '443/https', forward: target }],
      health: {
        [target]: {
          path: DEPLOYED.grpcHealthPath,
          // gRPC status 0 (OK) from the standard health service.
          successCodes: '0',
          interval: '10 seconds',
          timeout: '5 seconds',
          healthyThreshold: 2,
          unhealthyThreshold: 3,
        },
      },
    },
    transform: {
      // The target group speaks gRPC (HTTP/2 to the task); the health check above is then a gRPC call.
      target: (args) => {
        args.protocolVersion = 'GRPC';
        args.deregistrationDelay = 30;
      },
      // Agent streams live for hours; heartbeats keep them busy well within this.
      loadBalancer: (args) => {
        args.idleTimeout = 600;
      },
    },
  });

  return {
    api: api.url,
    grpc: `${driverDomain}:443`,
    table: table.name,
  };
}
