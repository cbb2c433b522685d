import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Allowances } from '../../agents/schema.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { agentIdentityKey, agentTokenKey } from './keys.ts';

/**
 * An agent identity kept in the table (docs/table.md, "Agent identities"). `incarnation` is drawn
 * when the name is first created and kept by later changes; every token carries the incarnation it
 * was issued for, so a token of a deleted identity never comes back to life when the name is made
 * again, even if deleting its token items was cut short.
 */
export interface StoredIdentity extends Allowances {
  name: string;
  incarnation: string;
  createdAt: number;
  updatedAt: number;
}

/** A token issued for an identity: its digest, never the token. */
export interface StoredToken {
  tokenId: string;
  identity: string;
  incarnation: string;
  /** Hex SHA-256 of the whole token. */
  digest: string;
  createdAt: number;
  /** When it stops being accepted (ms); none: until revoked. */
  notAfter?: number;
}

/** Expired token items stay this long (so a listing still shows them) before real DynamoDB deletes them by TTL. */
export const EXPIRED_TOKEN_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Creates the identity or changes its allowances; the old item (if any) comes back, so the caller knows which. */
export function putIdentityParams(tableName: string, name: string, allowances: Allowances, now: number, incarnation: string): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: agentIdentityKey(name),
    UpdateExpression:
      'SET #name = :name, zones = :zones, unzoned = :unzoned, agentIds = :agentIds, staticAccounts = :staticAccounts, ' +
      'incarnation = if_not_exists(incarnation, :inc), createdAt = if_not_exists(createdAt, :now), updatedAt = :now',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: {
      ':name': name,
      ':zones': allowances.zones,
      ':unzoned': allowances.unzoned,
      ':agentIds': allowances.agentIds,
      ':staticAccounts': allowances.staticAccounts,
      ':inc': incarnation,
      ':now': now,
    },
    ReturnValues: 'ALL_NEW',
  };
}

export function getIdentityParams(tableName: string, name: string): GetCommandInput {
  return { TableName: tableName, Key: agentIdentityKey(name), ConsistentRead: true };
}

export function listIdentitiesParams(tableName: string): QueryCommandInput {
  return { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.agentIdentity }, ConsistentRead: true };
}

export function deleteIdentityParams(tableName: string, name: string): DeleteCommandInput {
  return { TableName: tableName, Key: agentIdentityKey(name), ReturnValues: 'ALL_OLD' };
}

/** Writes a new token item; a token id drawn twice (never, in practice) loses instead of replacing the other. */
export function putTokenParams(tableName: string, token: StoredToken): PutCommandInput {
  const ttl = token.notAfter === undefined ? {} : { [TTL_ATTRIBUTE]: Math.ceil((token.notAfter + EXPIRED_TOKEN_RETENTION_MS) / 1000) };
  return {
    TableName: tableName,
    Item: { ...agentTokenKey(token.tokenId), ...token, ...ttl },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Strongly consistent, so a revoked token is refused by every replica from the moment the delete returns. */
export function getTokenParams(tableName: string, tokenId: string): GetCommandInput {
  return { TableName: tableName, Key: agentTokenKey(tokenId), ConsistentRead: true };
}

/** The tokens of one identity, or of all when `identity` is undefined. */
export function listTokensParams(tableName: string, identity?: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ...(identity === undefined ? {} : { FilterExpression: '#identity = :identity', ExpressionAttributeNames: { '#identity': 'identity' } }),
    ExpressionAttributeValues: { ':pk': PK.agentToken, ...(identity === undefined ? {} : { ':identity': identity }) },
    ConsistentRead: true,
  };
}

/** Deletes a token only as a token of `identity`: a token id of another identity is not found. */
export function deleteTokenParams(tableName: string, identity: string, tokenId: string): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: agentTokenKey(tokenId),
    ConditionExpression: '#identity = :identity',
    ExpressionAttributeNames: { '#identity': 'identity' },
    ExpressionAttributeValues: { ':identity': identity },
  };
}

function identityFrom(item: Record<string, unknown>): StoredIdentity {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as StoredIdentity;
}

function tokenFrom(item: Record<string, unknown>): StoredToken {
  const { pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _ttl, ...rest } = item;
  return rest as unknown as StoredToken;
}

export async function putIdentity(t: TableRef, name: string, allowances: Allowances, now: number, incarnation: string): Promise<StoredIdentity> {
  const out = await t.client.send(new UpdateCommand(putIdentityParams(t.tableName, name, allowances, now, incarnation)));
  return identityFrom(out.Attributes ?? {});
}

export async function getIdentity(t: TableRef, name: string): Promise<StoredIdentity | undefined> {
  const out = await t.client.send(new GetCommand(getIdentityParams(t.tableName, name)));
  return out.Item === undefined ? undefined : identityFrom(out.Item);
}

export async function listIdentities(t: TableRef): Promise<StoredIdentity[]> {
  return (await queryAll(t, listIdentitiesParams(t.tableName))).map(identityFrom);
}

/** Deletes the identity (which alone revokes its tokens) and then its token items; undefined when there was none. */
export async function deleteIdentity(t: TableRef, name: string): Promise<StoredIdentity | undefined> {
  const out = await t.client.send(new DeleteCommand(deleteIdentityParams(t.tableName, name)));
  for (const token of await listTokens(t, name)) await deleteToken(t, name, token.tokenId);
  return out.Attributes === undefined ? undefined : identityFrom(out.Attributes);
}

export async function putToken(t: TableRef, token: StoredToken): Promise<boolean> {
  return tryConditional(() => t.client.send(new PutCommand(putTokenParams(t.tableName, token))));
}

export async function getToken(t: TableRef, tokenId: string): Promise<StoredToken | undefined> {
  const out = await t.client.send(new GetCommand(getTokenParams(t.tableName, tokenId)));
  return out.Item === undefined ? undefined : tokenFrom(out.Item);
}

export async function listTokens(t: TableRef, identity?: string): Promise<StoredToken[]> {
  return (await queryAll(t, listTokensParams(t.tableName, identity))).map(tokenFrom);
}

/** False when there was no such token of that identity. */
export function deleteToken(t: TableRef, identity: string, tokenId: string): Promise<boolean> {
  return tryConditional(() => t.client.send(new DeleteCommand(deleteTokenParams(t.tableName, identity, tokenId))));
}

/**
 * Whether `token` is accepted for `identity` at `now`: issued for this incarnation of the identity
 * and not expired. The digest is compared by the caller.
 */
export function tokenLive(token: StoredToken, identity: StoredIdentity | undefined, now: number): identity is StoredIdentity {
  return identity !== undefined && identity.name === token.identity && identity.incarnation === token.incarnation && (token.notAfter === undefined || token.notAfter > now);
}
