/**
 * The live agents as the table knows them (GET /vendor/agents): the live session items, and which
 * accounts each agent holds, from the per-agent results the driver writes into each account item.
 * Both are what any API process (Lambda or `npm start`) reads, without asking a driver replica.
 */
import type { AccountRecord } from '../../accounts/model.ts';
import { allAccounts } from '../accounts/records.ts';
import type { TableRef } from '../core/client.ts';

/** One account an agent holds: the agent answered its assignment and is not being relieved of it. */
export interface HeldAccount {
  record: AccountRecord;
  caching: boolean;
}

/**
 * Every agent's held accounts, by agent id, in account name order. Reads the whole account partition
 * (one Query page per 1 MB): the account items are where holdings are kept.
 */
export async function heldAccountsByAgent(t: TableRef): Promise<Map<string, HeldAccount[]>> {
  const held = new Map<string, HeldAccount[]>();
  for await (const page of allAccounts(t)) {
    for (const record of page) {
      for (const result of Object.values(record.agents)) {
        if (!result.ok || result.removing === true) continue;
        const list = held.get(result.agentId) ?? [];
        list.push({ record, caching: result.caching });
        held.set(result.agentId, list);
      }
    }
  }
  return held;
}
