/**
 * sst.config.ts evaluated without the cloud: a recording stand-in for SST's globals runs it for a
 * development and a production stage, and the recorded components are checked against the code —
 * the table the code creates, the handler and Dockerfile it names, the links the code reads, the
 * ports the code listens on, the driver's production mode — and the deployed Lambda handler answers from a table reached through
 * the environment the function is given.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { endpointConfig, parseDriverFile, parseDriverGrpcConfig } from '../../driver/config.ts';
import { wakeSectionSchema } from '../../driver/wake/config.ts';
import { productionIssues } from '../../driver/transport-policy.ts';
import { SST_LINKS, linkedField } from '../../shared/links.ts';
import { isProductionEnv } from '../../shared/production.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../../shared/table/core/embedded.ts';
import { TTL_ATTRIBUTE, createTableInput } from '../../shared/table/core/schema.ts';
import { linksRead, reachableFiles } from './code-links.ts';
import { dockerfile } from './dockerfile.ts';
import { SstRecorder, applyTransform, loadSstConfig, resolved, type RecordedComponent, type SstConfigModule } from './sst-recorder.ts';
import { tableProcessEnv } from '../support/table-env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DOMAIN = 'grpc.vendor.example.test';
const SECRETS = {
  [SST_LINKS.oidcIssuer]: 'https://issuer.example.test',
  [SST_LINKS.oidcAudience]: 'vendor-api',
  [SST_LINKS.accountManagerRoles]: 'vendor-admins',
  [SST_LINKS.wakeSecret]: 'deploy-test-wake-secret-0123456789abcdef',
};

const recorder = new SstRecorder('vendor-agent', SECRETS);
let uninstall: () => void;
let config: SstConfigModule;
const runs = new Map<string, { outputs: Record<string, unknown>; components: RecordedComponent[] }>();

beforeAll(async () => {
  uninstall = recorder.install();
  config = await loadSstConfig(resolve(ROOT, 'sst.config.ts'));
  for (const stage of ['dev', 'production']) {
    const outputs = await recorder.run(config, stage, { VENDOR_DRIVER_DOMAIN: DOMAIN });
    runs.set(stage, { outputs, components: [...recorder.components] });
  }
});
afterAll(() => uninstall?.());

function stageRun(stage: string) {
  const run = runs.get(stage);
  if (run === undefined) throw new Error(`no run for ${stage}`);
  recorder.components.splice(0, recorder.components.length, ...run.components);
  return run;
}

function ofType(type: string): RecordedComponent {
  return recorder.single(type);
}

/**
 * What SST gives a deployed function for its links: the properties of each linked component, by
 * name, in one file encrypted with AES-256-GCM (zero nonce, tag at the end), and the key beside it.
 */
function sealedLinks(fn: RecordedComponent, stage: string): NodeJS.ProcessEnv {
  const resources = Object.fromEntries(
    recorder.linkedNames(fn).map((name) => {
      const c = recorder.named(name);
      const value = (SECRETS as Record<string, string>)[name] ?? (c.args.placeholder as string | undefined);
      return [name, c.type === 'sst.Secret' ? { type: c.type, value } : { type: c.type, name: `vendor-agent-${stage}-${name}` }];
    }),
  );
  const key = randomBytes(32);
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.alloc(12, 0));
  const file = join(mkdtempSync(join(tmpdir(), 'sst-links-')), 'resource.enc');
  writeFileSync(file, Buffer.concat([cipher.update(JSON.stringify(resources)), cipher.final(), cipher.getAuthTag()]));
  return { SST_KEY_FILE: file, SST_KEY: key.toString('base64') };
}

/** The CreateTable input SST's Dynamo component makes from its arguments (attributes, keys, on-demand billing). */
function tableInputOf(dynamo: RecordedComponent): CreateTableCommandInput {
  const args = dynamo.args as {
    fields: Record<string, string>;
    primaryIndex: { hashKey: string; rangeKey?: string };
    globalIndexes?: Record<string, { hashKey: string; rangeKey?: string }>;
  };
  const type = (t: string) => ({ string: 'S', number: 'N', binary: 'B' })[t] as 'S' | 'N' | 'B';
  const keys = (hash: string, range?: string) => [
    { AttributeName: hash, KeyType: 'HASH' as const },
    ...(range === undefined ? [] : [{ AttributeName: range, KeyType: 'RANGE' as const }]),
  ];
  const indexes = Object.entries(args.globalIndexes ?? {});
  return {
    TableName: dynamo.name,
    AttributeDefinitions: Object.entries(args.fields).map(([name, t]) => ({ AttributeName: name, AttributeType: type(t) })),
    KeySchema: keys(args.primaryIndex.hashKey, args.primaryIndex.rangeKey),
    BillingMode: 'PAY_PER_REQUEST',
    ...(indexes.length === 0
      ? {}
      : { GlobalSecondaryIndexes: indexes.map(([name, i]) => ({ IndexName: name, KeySchema: keys(i.hashKey, i.rangeKey), Projection: { ProjectionType: 'ALL' } })) }),
  };
}

const byName = <T extends { AttributeName?: string | undefined }>(list: T[] | undefined) =>
  [...(list ?? [])].sort((a, b) => String(a.AttributeName).localeCompare(String(b.AttributeName)));

describe('sst.config.ts: the app', () => {
  it('is an AWS app that keeps and protects production, and removes other stages', () => {
    expect(config.app({ stage: 'production' })).toMatchObject({ name: 'vendor-agent', home: 'aws', removal: 'retain', protect: true });
    expect(config.app({ stage: 'dev' })).toMatchObject({ name: 'vendor-agent', home: 'aws', removal: 'remove', protect: false });
  });

  it('refuses to deploy without the driver host name, saying which variable to set', async () => {
    await expect(recorder.run(config, 'dev', { VENDOR_DRIVER_DOMAIN: '' })).rejects.toThrow(/VENDOR_DRIVER_DOMAIN/);
  });

  it('refuses a reserved concurrency that is not a whole number', async () => {
    await expect(recorder.run(config, 'dev', { VENDOR_DRIVER_DOMAIN: DOMAIN, VENDOR_API_RESERVED_CONCURRENCY: 'many' })).rejects.toThrow(
      /VENDOR_API_RESERVED_CONCURRENCY must be a whole number/,
    );
  });

  it('outputs the API URL and the gRPC endpoint agents dial', () => {
    const { outputs } = stageRun('dev');
    expect(outputs.api).toBe('https://vendorapi.execute-api.recorded');
    expect(outputs.grpc).toBe(`${DOMAIN}:443`);
  });
});

describe('sst.config.ts: the table', () => {
  it('has exactly the keys and indexes of the table the code creates for dynalite', () => {
    stageRun('dev');
    const dynamo = ofType('sst.aws.Dynamo');
    expect(dynamo.name).toBe(SST_LINKS.table);
    const deployed = tableInputOf(dynamo);
    const code = createTableInput(dynamo.name);
    expect(byName(deployed.AttributeDefinitions)).toEqual(byName(code.AttributeDefinitions));
    expect(deployed.KeySchema).toEqual(code.KeySchema);
    expect(deployed.BillingMode).toBe(code.BillingMode);
    expect(deployed.GlobalSecondaryIndexes ?? []).toEqual(code.GlobalSecondaryIndexes ?? []);
    expect(code.LocalSecondaryIndexes ?? []).toEqual([]);
    expect(dynamo.args.ttl).toBe(TTL_ATTRIBUTE);
  });

  it('has point-in-time recovery and deletion protection on production only', () => {
    // SST's Dynamo turns point-in-time recovery on unless told otherwise; the transform decides.
    const start = { pointInTimeRecovery: { enabled: true } };
    stageRun('production');
    expect(applyTransform(ofType('sst.aws.Dynamo'), 'table', start)).toMatchObject({ pointInTimeRecovery: { enabled: true }, deletionProtectionEnabled: true });
    stageRun('dev');
    expect(applyTransform(ofType('sst.aws.Dynamo'), 'table', start)).toMatchObject({ pointInTimeRecovery: { enabled: false }, deletionProtectionEnabled: false });
  });
});

describe('sst.config.ts: the API', () => {
  it('runs the Hono Lambda handler on Node 24 behind an HTTP API route', () => {
    stageRun('dev');
    const fn = ofType('sst.aws.Function');
    expect(fn.args.runtime).toBe('nodejs24.x');
    const handler = String(fn.args.handler);
    const file = `${handler.slice(0, handler.lastIndexOf('.'))}.ts`;
    expect(existsSync(resolve(ROOT, file)), `${file} named by the handler`).toBe(true);
    expect(readFileSync(resolve(ROOT, file), 'utf8')).toMatch(/from 'hono\/aws-lambda'/);
    expect(readFileSync(resolve(ROOT, file), 'utf8')).toMatch(new RegExp(`export const ${handler.slice(handler.lastIndexOf('.') + 1)}\\b`));
    const api = ofType('sst.aws.ApiGatewayV2');
    expect(api.calls.map((c) => ({ method: c.method, args: resolved(c.args) }))).toEqual([
      { method: 'route', args: ['$default', `arn:aws:recorded:vendor-agent-dev-${fn.name}`] },
    ]);
  });

  it('is throttled: a rate and burst limit on the HTTP API, and reserved concurrency on production', () => {
    for (const stage of ['dev', 'production']) {
      stageRun(stage);
      const stageArgs = applyTransform(ofType('sst.aws.ApiGatewayV2'), 'stage', {}) as { defaultRouteSettings?: Record<string, number> };
      expect(stageArgs.defaultRouteSettings?.throttlingRateLimit).toBeGreaterThan(0);
      expect(stageArgs.defaultRouteSettings?.throttlingBurstLimit).toBeGreaterThanOrEqual(stageArgs.defaultRouteSettings?.throttlingRateLimit ?? Infinity);
    }
    stageRun('production');
    expect((ofType('sst.aws.Function').args.concurrency as { reserved?: number } | undefined)?.reserved).toBeGreaterThan(0);
  });
});

describe('sst.config.ts: the driver service', () => {
  it('builds the driver Dockerfile, whose entry file exists', () => {
    stageRun('dev');
    const service = ofType('sst.aws.Service');
    const image = service.args.image as { context: string; dockerfile: string };
    expect(image.context).toBe('.');
    expect(existsSync(resolve(ROOT, image.dockerfile)), image.dockerfile).toBe(true);
    const entry = dockerfile(resolve(ROOT, image.dockerfile)).entryFile();
    expect(existsSync(resolve(ROOT, entry)), `${entry}, the entry of ${image.dockerfile}`).toBe(true);
  });

  it('runs at least two tasks behind a load balancer carrying gRPC to the port the driver listens on by default', () => {
    stageRun('dev');
    const service = ofType('sst.aws.Service');
    const defaultPort = parseDriverGrpcConfig({}).grpc.port;
    const lb = service.args.loadBalancer as { domain: unknown; rules: { listen: string; forward: string }[]; health: Record<string, Record<string, unknown>> };
    expect(lb.rules).toEqual([{ listen: '443/https', forward: `${defaultPort}/http` }]);
    expect(lb.domain).toBe(DOMAIN);
    expect(lb.health[`${defaultPort}/http`]).toMatchObject({ path: '/grpc.health.v1.Health/Check', successCodes: '0' });
    expect(applyTransform(service, 'target', {})).toMatchObject({ protocolVersion: 'GRPC' });
    expect((service.args.scaling as { min: number }).min).toBeGreaterThanOrEqual(2);
    expect(readFileSync(resolve(ROOT, 'deploy/driver/vendor-driver.aws.yml'), 'utf8')).toMatch(new RegExp(`^\\s+port: ${defaultPort}$`, 'm'));
  });

  it('runs in production mode on every stage, behind the load balancer that terminates TLS, and is given no agent secret', () => {
    const deployedFile = parseDriverFile(readFileSync(resolve(ROOT, 'deploy/driver/vendor-driver.aws.yml'), 'utf8'), 'vendor-driver.aws.yml');
    expect(deployedFile.grpc.behindTlsProxy).toBe(true);
    expect(productionIssues(endpointConfig(deployedFile))).toEqual([]);
    for (const stage of ['dev', 'production']) {
      stageRun(stage);
      const service = ofType('sst.aws.Service');
      expect(service.args.environment, stage).toEqual({ VENDOR_ENV: 'production' });
      expect(isProductionEnv(service.args.environment as NodeJS.ProcessEnv), stage).toBe(true);
      // The table and the wake secret are all it reads: agents' credentials live in the table, issued per identity.
      expect(recorder.linkedNames(service), stage).toEqual([SST_LINKS.table, SST_LINKS.wakeSecret]);
      expect(recorder.components.map((c) => c.name), stage).not.toContain('VendorAgentTokens');
      expect(recorder.components.filter((c) => c.type === 'sst.Secret').map((c) => c.name).sort(), stage).toEqual(
        [SST_LINKS.oidcIssuer, SST_LINKS.oidcAudience, SST_LINKS.oidcRolesClaim, SST_LINKS.oidcClientId, SST_LINKS.oidcScopes, SST_LINKS.oidcResource, SST_LINKS.accountManagerRoles, SST_LINKS.openAccounts, SST_LINKS.wakeSecret].sort(),
      );
    }
  });

  it('uses a certificate given by ARN for a name outside Route 53', async () => {
    await recorder.run(config, 'dev', { VENDOR_DRIVER_DOMAIN: DOMAIN, VENDOR_DRIVER_CERT_ARN: 'arn:aws:acm:eu-west-1:1:certificate/x' });
    const lb = recorder.single('sst.aws.Service').args.loadBalancer as { domain: unknown };
    expect(lb.domain).toEqual({ name: DOMAIN, cert: 'arn:aws:acm:eu-west-1:1:certificate/x', dns: false });
  });
});

describe('sst.config.ts: wakes from the API to the driver tasks', () => {
  it('runs the API function in the VPC, in a security group of its own that admits nothing', () => {
    for (const stage of ['dev', 'production']) {
      stageRun(stage);
      const fn = ofType('sst.aws.Function');
      const group = ofType('aws.ec2.SecurityGroup');
      const vpc = ofType('sst.aws.Vpc');
      expect(resolved(fn.args.vpc), stage).toEqual({ privateSubnets: ['VendorVpc-private-a', 'VendorVpc-private-b'], securityGroups: [`vendor-agent-${stage}-${group.name}`] });
      expect(resolved(group.args.vpcId)).toBe(`vendor-agent-${stage}-${vpc.name}`);
      expect(group.args.ingress ?? []).toEqual([]);
      // A function in a VPC reaches the issuer's keys and the table only through NAT.
      expect(vpc.args.nat).toBeDefined();
    }
  });

  it('lets only the API function\'s group reach the driver tasks on the wake port, over UDP (wakes) and TCP (result asks), which the driver listens on by default and in its deployed file', () => {
    stageRun('dev');
    const rules = recorder.components.filter((c) => c.type === 'aws.vpc.SecurityGroupIngressRule');
    const group = ofType('aws.ec2.SecurityGroup');
    const defaultPort = v.parse(wakeSectionSchema, {}).port;
    const rule = (ipProtocol: string) => ({
      securityGroupId: 'VendorVpc-security-group',
      referencedSecurityGroupId: `vendor-agent-dev-${group.name}`,
      ipProtocol,
      fromPort: defaultPort,
      toPort: defaultPort,
      description: expect.any(String),
    });
    expect(rules.map((r) => resolved(r.args))).toEqual([rule('udp'), rule('tcp')]);
    expect(v.parse(wakeSectionSchema, {}).results).toBe(true);
    const deployedFile = parseDriverFile(readFileSync(resolve(ROOT, 'deploy/driver/vendor-driver.aws.yml'), 'utf8'), 'vendor-driver.aws.yml');
    expect(deployedFile.wake).toMatchObject({ enabled: true, port: defaultPort, host: '0.0.0.0' });
    // The load balancer forwards gRPC alone: the wake port is not reachable from outside the VPC.
    const lb = ofType('sst.aws.Service').args.loadBalancer as { rules: { listen: string; forward: string }[] };
    expect(lb.rules.map((r) => r.forward)).not.toContain(`${defaultPort}/udp`);
    expect(lb.rules.map((r) => r.forward)).not.toContain(`${defaultPort}/tcp`);
  });

  it('links the wake secret to both the API function and the driver service', () => {
    stageRun('dev');
    expect(recorder.linkedNames(ofType('sst.aws.Function'))).toContain(SST_LINKS.wakeSecret);
    expect(recorder.linkedNames(ofType('sst.aws.Service'))).toContain(SST_LINKS.wakeSecret);
  });
});

describe('sst.config.ts: links', () => {
  const units = () => [
    { entry: 'functions/lambda.ts', component: ofType('sst.aws.Function') },
    { entry: dockerfile(resolve(ROOT, 'deploy/docker/driver.Dockerfile')).entryFile(), component: ofType('sst.aws.Service') },
  ];

  it('declares every link name of shared/links.ts as a component of the matching kind', () => {
    stageRun('dev');
    expect(recorder.named(SST_LINKS.table).type).toBe('sst.aws.Dynamo');
    for (const name of [SST_LINKS.oidcIssuer, SST_LINKS.oidcAudience, SST_LINKS.oidcRolesClaim, SST_LINKS.oidcClientId, SST_LINKS.oidcScopes, SST_LINKS.oidcResource, SST_LINKS.accountManagerRoles, SST_LINKS.openAccounts, SST_LINKS.wakeSecret]) {
      expect(recorder.named(name).type).toBe('sst.Secret');
    }
    const linkedSomewhere = new Set(units().flatMap((u) => recorder.linkedNames(u.component)));
    expect([...linkedSomewhere].sort()).toEqual(Object.values(SST_LINKS).sort());
  });

  for (const [unit, index] of [['the API function', 0], ['the driver service', 1]] as const) {
    it(`links ${unit} to every resource its code reads`, () => {
      stageRun('dev');
      const { entry, component } = units()[index]!;
      const read = linksRead(ROOT, reachableFiles(ROOT, entry));
      expect(read.size, `${entry} reads no link at all`).toBeGreaterThan(0);
      const linked = recorder.linkedNames(component);
      for (const [name, files] of read) expect(linked, `${component.name} runs ${entry}, which reads ${name} in ${files.join(', ')}`).toContain(name);
    });
  }

  it('the Lambda function reads each of its links from SST\'s encrypted link file', () => {
    stageRun('dev');
    const fn = ofType('sst.aws.Function');
    const env = sealedLinks(fn, 'dev');
    for (const name of recorder.linkedNames(fn)) {
      const component = recorder.named(name);
      const field = component.type === 'sst.Secret' ? 'value' : 'name';
      const expected = field === 'value' ? ((SECRETS as Record<string, string>)[name] ?? component.args.placeholder) : `vendor-agent-dev-${name}`;
      expect(linkedField(env, name as (typeof SST_LINKS)[keyof typeof SST_LINKS], field), name).toBe(expected);
    }
    expect(fn.args.environment ?? {}).toEqual({});
  });
});

describe('the deployed API function', () => {
  let table: EmbeddedTable;
  beforeAll(async () => {
    stageRun('dev');
    const env = sealedLinks(ofType('sst.aws.Function'), 'dev');
    table = await startEmbeddedTable({ tableName: linkedField(env, SST_LINKS.table, 'name')!, tcp: true });
    delete process.env.VENDOR_TABLE_NAME;
    // Lambda supplies the region and credentials; the endpoint points the SDK at the embedded table.
    Object.assign(process.env, env, tableProcessEnv({ endpoint: table.endpoint }));
  });
  afterAll(() => table?.close());

  it('answers through hono/aws-lambda from the table named by its link', async () => {
    const { handler } = (await import('../../functions/lambda.ts')) as unknown as {
      handler: (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;
    };
    // The fields of an HTTP API (payload 2.0) event that hono/aws-lambda reads.
    const event = {
      version: '2.0',
      rawPath: '/healthz',
      rawQueryString: '',
      headers: { host: 'vendorapi.execute-api.recorded' },
      requestContext: { domainName: 'vendorapi.execute-api.recorded', http: { method: 'GET', path: '/healthz', sourceIp: '127.0.0.1' } },
      isBase64Encoded: false,
    };
    const response = await handler(event, {});
    expect(response.statusCode, response.body).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
  });
});
