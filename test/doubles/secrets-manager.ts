import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * AWS Secrets Manager on loopback, speaking the AWS JSON 1.1 protocol for `GetSecretValue` well
 * enough that the real SDK works against it unchanged: it checks the SigV4 signature against the
 * credentials it was given (so a wrong key, region or service fails as on AWS), answers
 * `x-amz-target: secretsmanager.GetSecretValue` by name or ARN, and reports errors as a 400 with
 * `{"__type": ..., "Message": ...}` and the `x-amzn-errortype` header.
 */
export interface SecretsManagerDoubleOptions {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  accountId?: string;
}

export interface SecretsManagerRequestRecord {
  target: string | undefined;
  secretId: string | undefined;
  accessKeyId: string | undefined;
}

export interface SecretsManagerDouble {
  readonly endpoint: string;
  readonly requests: SecretsManagerRequestRecord[];
  /** Stores a new current version of a secret and returns its ARN. */
  putSecret(name: string, value: { string: string } | { binary: Uint8Array }): string;
  /** Deletion is scheduled: reads fail with InvalidRequestException until it is restored. */
  scheduleDeletion(name: string): void;
  /** The caller's identity is not allowed to read this secret. */
  denyRead(name: string): void;
  close(): Promise<void>;
}

interface StoredSecret {
  arn: string;
  versionId: string;
  value: { string: string } | { binary: Uint8Array };
  created: number;
  deletionScheduled: boolean;
  denied: boolean;
}

const SERVICE = 'secretsmanager';

export async function startSecretsManagerDouble(options: SecretsManagerDoubleOptions): Promise<SecretsManagerDouble> {
  const accountId = options.accountId ?? '123456789012';
  const secrets = new Map<string, StoredSecret>();
  const requests: SecretsManagerRequestRecord[] = [];

  const find = (id: string) => secrets.get(id) ?? [...secrets.values()].find((s) => s.arn === id);

  const handle = (req: IncomingMessage, raw: Buffer): Reply => {
    const target = header(req, 'x-amz-target');
    const credential = /Credential=([^/]+)\//.exec(header(req, 'authorization') ?? '')?.[1];
    let body: { SecretId?: unknown; VersionId?: unknown } = {};
    try {
      body = raw.length === 0 ? {} : (JSON.parse(raw.toString('utf8')) as typeof body);
    } catch {
      return fault('SerializationException', 'Start of structure or map found where not expected.');
    }
    requests.push({ target, secretId: typeof body.SecretId === 'string' ? body.SecretId : undefined, accessKeyId: credential });

    const denied = checkSignature(req, raw, options);
    if (denied !== undefined) return denied;
    if (req.method !== 'POST' || header(req, 'content-type')?.startsWith('application/x-amz-json-1.1') !== true) {
      return fault('UnknownOperationException', '');
    }
    if (target !== 'secretsmanager.GetSecretValue') return fault('UnknownOperationException', '');
    if (typeof body.SecretId !== 'string' || body.SecretId === '') {
      return fault('InvalidParameterException', 'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!');
    }
    const secret = find(body.SecretId);
    if (secret === undefined) return fault('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    if (secret.denied) {
      return fault(
        'AccessDeniedException',
        `User: arn:aws:iam::${accountId}:user/agent is not authorized to perform: secretsmanager:GetSecretValue on resource: ${body.SecretId} because no identity-based policy allows the secretsmanager:GetSecretValue action`,
      );
    }
    if (secret.deletionScheduled) {
      return fault('InvalidRequestException', "You can't perform this operation on the secret because it was marked for deletion.");
    }
    if (body.VersionId !== undefined && body.VersionId !== secret.versionId) {
      return fault('ResourceNotFoundException', `Secrets Manager can't find the specified secret value for VersionId: ${String(body.VersionId)}`);
    }
    const name = secret.arn.slice(secret.arn.indexOf(':secret:') + ':secret:'.length, -7);
    return {
      status: 200,
      body: {
        ARN: secret.arn,
        Name: name,
        VersionId: secret.versionId,
        ...('string' in secret.value ? { SecretString: secret.value.string } : { SecretBinary: Buffer.from(secret.value.binary).toString('base64') }),
        VersionStages: ['AWSCURRENT'],
        CreatedDate: secret.created / 1000,
      },
    };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = handle(req, Buffer.concat(chunks));
      const headers: Record<string, string> = { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() };
      if (reply.status !== 200) headers['x-amzn-errortype'] = (reply.body as { __type: string }).__type;
      res.writeHead(reply.status, headers);
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    putSecret(name, value) {
      const existing = secrets.get(name);
      const suffix = randomUUID().replace(/-/g, '').slice(0, 6);
      const arn = existing?.arn ?? `arn:aws:secretsmanager:${options.region}:${accountId}:secret:${name}-${suffix}`;
      secrets.set(name, { arn, versionId: randomUUID(), value, created: Date.now(), deletionScheduled: false, denied: existing?.denied ?? false });
      return arn;
    },
    scheduleDeletion(name) {
      const secret = secrets.get(name);
      if (secret !== undefined) secret.deletionScheduled = true;
    },
    denyRead(name) {
      const secret = secrets.get(name);
      if (secret !== undefined) secret.denied = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Reply {
  status: number;
  body: unknown;
}

function fault(type: string, message: string): Reply {
  return { status: 400, body: { __type: type, Message: message } };
}

/** Verifies an `AWS4-HMAC-SHA256` Authorization header; undefined when it is valid. */
function checkSignature(req: IncomingMessage, payload: Buffer, options: SecretsManagerDoubleOptions): Reply | undefined {
  const authorization = header(req, 'authorization');
  if (authorization === undefined) return fault('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (parsed === null) return fault('IncompleteSignatureException', 'Authorization header requires Credential, SignedHeaders and Signature.');
  const [, accessKeyId, date = '', region = '', service = '', signedHeaders = '', signature = ''] = parsed;
  if (accessKeyId !== options.credentials.accessKeyId) return fault('UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (region !== options.region) return fault('InvalidSignatureException', `Credential should be scoped to a valid region. `);
  if (service !== SERVICE) return fault('InvalidSignatureException', `Credential should be scoped to correct service: '${SERVICE}'. `);
  const amzDate = header(req, 'x-amz-date') ?? '';
  if (!amzDate.startsWith(date)) return fault('InvalidSignatureException', 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.');

  const url = new URL(req.url ?? '/', 'http://double');
  const names = signedHeaders.split(';');
  const canonicalHeaders = names.map((n) => `${n}:${(header(req, n) ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalQuery = [...url.searchParams.entries()]
    .map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)])
    .sort(([a = ''], [b = '']) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [req.method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders, sha256(payload)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${options.credentials.secretAccessKey}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  if (createHmac('sha256', key).update(stringToSign).digest('hex') !== signature) {
    return fault(
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
  }
  return undefined;
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
