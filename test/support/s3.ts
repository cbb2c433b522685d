/**
 * A local S3 for tests: s3rver on a free loopback port, its objects in a temporary folder, spoken to
 * through the real `@aws-sdk/client-s3`. Each test file starts its own and closes it; nothing global.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** The one key pair s3rver accepts. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const LOCAL_S3_REGION = 'eu-west-1';

export interface LocalS3 {
  /** `http://127.0.0.1:<port>`; an IP address, so the SDK addresses buckets by path. */
  readonly endpoint: string;
  /**
   * What a process needs to reach it through the SDK's own configuration: the service endpoint
   * (`AWS_ENDPOINT_URL_S3`), credentials and region.
   */
  readonly env: Readonly<Record<string, string>>;
  createBucket(bucket: string): Promise<void>;
  putObject(bucket: string, key: string, body: string | Uint8Array): Promise<void>;
  deleteObject(bucket: string, key: string): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalS3(): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'local-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: LOCAL_S3_REGION, endpoint, credentials: LOCAL_S3_CREDENTIALS, maxAttempts: 1 });
  return {
    endpoint,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: LOCAL_S3_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_S3_CREDENTIALS.secretAccessKey,
      AWS_REGION: LOCAL_S3_REGION,
    },
    async createBucket(bucket) {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    },
    async putObject(bucket, key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(body) }));
    },
    async deleteObject(bucket, key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
