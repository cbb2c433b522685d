import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ChecksumConstructor } from '@smithy/types';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from './client.ts';
import { TableSha256 } from './sha256.ts';

type Input = string | Uint8Array;
type HashClass = ChecksumConstructor;

async function digestOf(Hash: HashClass, secret: Input | undefined, parts: Input[]): Promise<string> {
  const h = secret === undefined ? new Hash() : new Hash(secret);
  for (const part of parts) h.update(typeof part === 'string' ? Buffer.from(part) : part);
  return Buffer.from(await h.digest()).toString('hex');
}

function request(body: string): HttpRequest {
  return new HttpRequest({
    method: 'POST',
    protocol: 'https:',
    hostname: 'dynamodb.eu-west-1.amazonaws.com',
    path: '/',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem', host: 'dynamodb.eu-west-1.amazonaws.com' },
    body,
  });
}

async function authorization(Hash: HashClass, body: string, at: Date): Promise<string | undefined> {
  const signer = new SignatureV4({
    service: 'dynamodb',
    region: 'eu-west-1',
    sha256: Hash,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'token' },
  });
  const signed = (await signer.sign(request(body), { signingDate: at })) as HttpRequest;
  return signed.headers.authorization;
}

describe('TableSha256', () => {
  it('gives the digests of the SDK’s own hash, plain and keyed', async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const cases: [Input | undefined, Input[]][] = [
      [undefined, []],
      [undefined, ['{"TableName":"t"}']],
      [undefined, ['a', bytes, 'é']],
      ['', ['empty string key is a plain hash']],
      ['AWS4secret', ['20261127']],
      [bytes, ['eu-west-1', bytes]],
      [new Uint8Array(0), ['an empty byte key is still a key']],
      [new Uint8Array(new ArrayBuffer(40), 8, 16).fill(9), ['a view into a larger buffer']],
    ];
    for (const [secret, parts] of cases) expect(await digestOf(TableSha256, secret, parts)).toBe(await digestOf(Sha256, secret, parts));
  });

  it('digests a plain hash again after more data, as the SDK’s does', async () => {
    const ours = new TableSha256();
    const theirs = new Sha256();
    ours.update('first');
    theirs.update(Buffer.from('first'));
    expect(Buffer.from(await ours.digest())).toEqual(Buffer.from(await theirs.digest()));
    ours.update('second');
    theirs.update(Buffer.from('second'));
    expect(Buffer.from(await ours.digest())).toEqual(Buffer.from(await theirs.digest()));
  });

  it('digests what it was given when it was given it, and starts over on reset', async () => {
    const reused = Buffer.from('first');
    const ours = new TableSha256();
    ours.update(reused);
    reused.write('later');
    expect(Buffer.from(await ours.digest()).toString('hex')).toBe(await digestOf(Sha256, undefined, ['first']));
    ours.reset();
    ours.update('again');
    expect(Buffer.from(await ours.digest()).toString('hex')).toBe(await digestOf(Sha256, undefined, ['again']));
    const keyed = new TableSha256('k');
    keyed.update('one');
    await keyed.digest();
    keyed.reset();
    keyed.update('two');
    expect(Buffer.from(await keyed.digest()).toString('hex')).toBe(await digestOf(Sha256, 'k', ['two']));
  });

  it('answers a kept HMAC of a short message right again, whatever a caller did with the last answer', async () => {
    const expected = await digestOf(Sha256, 'secret-access-key', ['AKIDEXAMPLE']);
    for (let i = 0; i < 3; i++) {
      const h = new TableSha256('secret-access-key');
      h.update('AKIDEXAMPLE');
      const out = await h.digest();
      expect(Buffer.from(out).toString('hex')).toBe(expected);
      out.fill(0);
    }
    // The same message under another key is another digest.
    const other = new TableSha256('another-secret');
    other.update('AKIDEXAMPLE');
    expect(Buffer.from(await other.digest()).toString('hex')).toBe(await digestOf(Sha256, 'another-secret', ['AKIDEXAMPLE']));
  });

  it('signs a DynamoDB request exactly as the SDK’s hash does (SigV4), across days and bodies', async () => {
    for (const at of [new Date('2026-11-27T12:00:00Z'), new Date('2026-11-28T00:00:01Z')]) {
      for (const body of ['{"TableName":"vendor","Key":{"pk":{"S":"OPERATION"},"sk":{"S":"x"}}}', '{}']) {
        const ours = await authorization(TableSha256, body, at);
        expect(ours).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
        expect(ours).toBe(await authorization(Sha256, body, at));
      }
    }
  });

  it('is the hash every table client signs with', () => {
    const client = createDocumentClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    expect((client.config as { sha256?: unknown }).sha256).toBe(TableSha256);
    client.destroy();
  });
});
