import { PK, type Key } from '../core/keys.ts';

export function sessionKey(zoneId: string, agentId: string): Key {
  return { pk: PK.session, sk: `${zoneId}#${agentId}` };
}

export function agentBindingKey(agentId: string): Key {
  return { pk: PK.agentBinding, sk: agentId };
}

export function agentIdentityKey(name: string): Key {
  return { pk: PK.agentIdentity, sk: name };
}

export function agentTokenKey(tokenId: string): Key {
  return { pk: PK.agentToken, sk: tokenId };
}
