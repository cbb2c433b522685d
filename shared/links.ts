import { createDecipheriv } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { VendorError } from './errors.ts';

/**
 * The SST links deployed code reads. SST hands a container its linked resources as environment
 * variables `SST_RESOURCE_<name>`, each a JSON object (`{ name }` for a table, `{ value }` for a
 * secret), and a Lambda function as one encrypted file (`SST_KEY_FILE`, key in `SST_KEY`) holding
 * the same objects by name. This is the only place that reads either, so the deployment's check can
 * compare what `sst.config.ts` links with what the code reads.
 */
export const SST_LINKS = {
  /** The DynamoDB table (`name`). */
  table: 'VendorTable',
  /** OIDC issuer URL whose JWKS verifies API callers (`value`). */
  oidcIssuer: 'VendorOidcIssuer',
  /** Audience API caller tokens must carry (`value`; several separated by commas). */
  oidcAudience: 'VendorOidcAudience',
  /** Claim holding the API caller's roles, a name or dot path (`value`; default `groups`). */
  oidcRolesClaim: 'VendorOidcRolesClaim',
  /** The console's public client id at the issuer (`value`; empty: the console offers no OIDC sign-in). */
  oidcClientId: 'VendorOidcClientId',
  /** Scopes the console asks for (`value`: names separated by commas or white space; empty: `openid` only). */
  oidcScopes: 'VendorOidcScopes',
  /** Resource indicator the console asks its access token for, one of the audiences (`value`; empty: none). */
  oidcResource: 'VendorOidcResource',
  /** Roles that may manage accounts through the API (`value`: names separated by commas or white space). */
  accountManagerRoles: 'VendorAccountManagerRoles',
  /** Who may write to accounts without usable permissions (`value`: `readOnly` or `readWrite`). */
  openAccounts: 'VendorOpenAccounts',
  /** The secret the API signs wakes with and driver replicas check them with (`value`; docs/protocol.md#6b-wakes). */
  wakeSecret: 'VendorWakeSecret',
} as const;

export type SstLinkName = (typeof SST_LINKS)[keyof typeof SST_LINKS];

const decrypted = new Map<string, Record<string, unknown>>();

/**
 * The resources of SST's encrypted link file: AES-256-GCM with the base64 key of `SST_KEY`, an
 * all-zero 12-byte nonce and the 16-byte tag at the end. Read once per file, since a function's
 * links do not change while it runs.
 */
function encryptedLinks(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const file = env['SST_KEY_FILE'];
  const key = env['SST_KEY'];
  if (!file || !key) return undefined;
  const known = decrypted.get(file);
  if (known !== undefined) return known;
  let data: Record<string, unknown>;
  try {
    const bytes = readFileSync(file);
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64'), Buffer.alloc(12, 0));
    decipher.setAuthTag(bytes.subarray(-16));
    const plain = Buffer.concat([decipher.update(bytes.subarray(0, -16)), decipher.final()]);
    data = JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
  } catch (cause) {
    // The key and the file's contents stay out of the message: both are secrets.
    throw new VendorError('invalid_input', `the SST link file named by SST_KEY_FILE cannot be read or decrypted with SST_KEY`, { cause });
  }
  decrypted.set(file, data);
  return data;
}

function fieldOf(resource: unknown, where: string, field: string): string {
  const found = typeof resource === 'object' && resource !== null ? (resource as Record<string, unknown>)[field] : undefined;
  if (typeof found !== 'string') throw new VendorError('invalid_input', `${where} has no string field "${field}"`);
  return found;
}

/** One field of a linked resource, or undefined when the resource is not linked. */
export function linkedField(env: NodeJS.ProcessEnv, link: SstLinkName, field: 'name' | 'value'): string | undefined {
  const variable = `SST_RESOURCE_${link}`;
  const raw = env[variable];
  if (raw !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (cause) {
      throw new VendorError('invalid_input', `${variable} is not JSON`, { cause });
    }
    return fieldOf(parsed, variable, field);
  }
  const resource = encryptedLinks(env)?.[link];
  return resource === undefined ? undefined : fieldOf(resource, `the linked resource ${link}`, field);
}
