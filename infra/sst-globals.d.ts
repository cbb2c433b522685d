/**
 * The part of SST v3's global API that `sst.config.ts` uses, declared so that `npm run typecheck`
 * checks the deployment without installing SST (it is a deploy-time tool, never a dependency of the
 * code). The shapes follow SST v3's component arguments; only the fields this project sets are
 * listed. `sst.config.ts` must not reference `.sst/platform/config.d.ts` (SST's full declarations),
 * which would clash with these. The deployment test (`test/deploy/sst-config.test.ts`) evaluates the
 * config with a recording stand-in for exactly these globals.
 */

interface SstOutput<T> {
  apply<U>(fn: (value: T) => U): SstOutput<U>;
}

type SstInput<T> = T | SstOutput<T> | Promise<T>;

/** SST's `Transform<T>`: fields merged into the resource's arguments, or a function that edits them. */
type SstTransform<T> = Partial<T> | ((args: T, opts: Record<string, unknown>, name: string) => void);

interface SstAppInput {
  stage: string;
}

interface SstAppSettings {
  name: string;
  home: 'aws';
  removal?: 'remove' | 'retain' | 'retain-all';
  protect?: boolean;
  providers?: Record<string, unknown>;
}

interface SstConfig {
  app(input: SstAppInput): SstAppSettings;
  run(): Promise<Record<string, SstInput<string>> | void>;
}

/** A component that can be linked: its properties reach the linked code as `Resource.<name>`. */
interface SstLinkable {
  readonly urn: SstOutput<string>;
}

interface SstDynamoArgs {
  fields: Record<string, 'string' | 'number' | 'binary'>;
  primaryIndex: { hashKey: string; rangeKey?: string };
  globalIndexes?: Record<string, { hashKey: string; rangeKey?: string }>;
  localIndexes?: Record<string, { rangeKey: string }>;
  ttl?: string;
  transform?: {
    table?: SstTransform<{
      pointInTimeRecovery?: { enabled: boolean };
      deletionProtectionEnabled?: boolean;
      [key: string]: unknown;
    }>;
  };
}

interface SstDynamo extends SstLinkable {
  readonly name: SstOutput<string>;
  readonly arn: SstOutput<string>;
}

interface SstSecret extends SstLinkable {
  readonly name: string;
  readonly value: SstOutput<string>;
}

type SstDuration = `${number} ${'second' | 'seconds' | 'minute' | 'minutes'}`;

interface SstFunctionArgs {
  handler: string;
  runtime?: 'nodejs22.x' | 'nodejs24.x';
  architecture?: 'x86_64' | 'arm64';
  memory?: `${number} MB`;
  timeout?: SstDuration;
  link?: SstLinkable[];
  environment?: Record<string, SstInput<string>>;
  concurrency?: { reserved?: number; provisioned?: number };
  url?: boolean;
  logging?: { retention?: string; format?: 'text' | 'json' };
  /** Files copied into the function's package: `from` relative to the project, `to` relative to the package root. */
  copyFiles?: { from: string; to?: string }[];
  vpc?: { privateSubnets: SstInput<string[]>; securityGroups: SstInput<string>[] };
}

interface SstFunction extends SstLinkable {
  readonly arn: SstOutput<string>;
  readonly name: SstOutput<string>;
}

interface SstApiGatewayV2Args {
  domain?: string;
  accessLog?: { retention?: string };
  transform?: {
    stage?: SstTransform<{
      defaultRouteSettings?: { throttlingRateLimit?: number; throttlingBurstLimit?: number; [key: string]: unknown };
      [key: string]: unknown;
    }>;
  };
}

interface SstApiGatewayV2 {
  readonly url: SstOutput<string>;
  route(route: string, handler: SstInput<string>): unknown;
}

interface SstVpc {
  readonly id: SstOutput<string>;
  readonly privateSubnets: SstOutput<string[]>;
  readonly securityGroups: SstOutput<string[]>;
}

/** The parts of the Pulumi AWS provider (`aws.*`, global in sst.config.ts) the stack uses. */
interface AwsSecurityGroupArgs {
  vpcId: SstInput<string>;
  description?: string;
  egress?: { protocol: string; fromPort: number; toPort: number; cidrBlocks?: string[] }[];
}

interface AwsSecurityGroup {
  readonly id: SstOutput<string>;
}

interface AwsSecurityGroupIngressRuleArgs {
  securityGroupId: SstInput<string>;
  referencedSecurityGroupId?: SstInput<string>;
  ipProtocol: 'tcp' | 'udp';
  fromPort: number;
  toPort: number;
  description?: string;
}

declare const aws: {
  ec2: { SecurityGroup: new (name: string, args: AwsSecurityGroupArgs) => AwsSecurityGroup };
  vpc: { SecurityGroupIngressRule: new (name: string, args: AwsSecurityGroupIngressRuleArgs) => unknown };
};

interface SstCluster {
  readonly id: SstOutput<string>;
}

type SstPort = `${number}/${'http' | 'https' | 'tcp' | 'udp' | 'tcp_udp' | 'tls'}`;

interface SstServiceHealth {
  path?: string;
  interval?: SstDuration;
  timeout?: SstDuration;
  healthyThreshold?: number;
  unhealthyThreshold?: number;
  successCodes?: string;
}

interface SstServiceArgs {
  cluster: SstCluster;
  image: { context: string; dockerfile: string };
  architecture?: 'x86_64' | 'arm64';
  cpu?: '0.25 vCPU' | '0.5 vCPU' | '1 vCPU' | '2 vCPU';
  memory?: `${number} GB`;
  link?: SstLinkable[];
  environment?: Record<string, SstInput<string>>;
  scaling?: { min: number; max: number; cpuUtilization?: number; memoryUtilization?: number };
  health?: { command: string[]; interval?: SstDuration; timeout?: SstDuration; retries?: number; startPeriod?: SstDuration };
  loadBalancer?: {
    domain?: string | { name: string; cert?: string; dns?: false };
    rules: { listen: SstPort; forward?: SstPort }[];
    health?: Record<string, SstServiceHealth>;
  };
  transform?: {
    target?: SstTransform<{ protocolVersion?: string; deregistrationDelay?: number; [key: string]: unknown }>;
    loadBalancer?: SstTransform<{ idleTimeout?: number; [key: string]: unknown }>;
  };
}

interface SstService {
  readonly url: SstOutput<string>;
}

declare function $config(config: SstConfig): SstConfig;
declare const $app: { readonly name: string; readonly stage: string };
declare function $interpolate(strings: TemplateStringsArray, ...values: unknown[]): SstOutput<string>;
declare function $jsonStringify(value: unknown): SstOutput<string>;

declare const sst: {
  Secret: new (name: string, placeholder?: string) => SstSecret;
  aws: {
    Dynamo: new (name: string, args: SstDynamoArgs) => SstDynamo;
    Function: new (name: string, args: SstFunctionArgs) => SstFunction;
    ApiGatewayV2: new (name: string, args?: SstApiGatewayV2Args) => SstApiGatewayV2;
    Vpc: new (name: string, args?: { az?: number; nat?: 'ec2' | 'managed' }) => SstVpc;
    Cluster: new (name: string, args: { vpc: SstVpc }) => SstCluster;
    Service: new (name: string, args: SstServiceArgs) => SstService;
  };
};
