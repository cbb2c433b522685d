/**
 * Where the time of one PATCH to ACTIVE goes in the deployed layout, from the debug records the
 * replicas and the agent write at each hop (bench/deployed-plane.ts `debugRecords`). Every record
 * carries its process's wall-clock time (ms), and all processes run on one machine, so the marks of
 * one activation are comparable across processes. A hop is the time from the previous mark found to
 * its own; a mark that is absent (no wake when wakes are off) adds its time to the next hop.
 */
import { readFileSync } from 'node:fs';
import { percentile, round } from './stats.ts';

export interface HopRecord {
  msg: string;
  /** ms since epoch. */
  at: number;
  account?: string;
  accounts?: string[];
  topic?: string;
  kind?: string;
  answer?: boolean;
}

/** What a record of the breakdown carries, or undefined for any other record. */
export function hopRecord(record: Record<string, unknown>): HopRecord | undefined {
  const msg = record['msg'];
  if (typeof msg !== 'string' || !HOP_MESSAGES.has(msg)) return undefined;
  const at = Date.parse(String(record['time']));
  if (Number.isNaN(at)) return undefined;
  return {
    msg,
    at,
    ...(typeof record['account'] === 'string' ? { account: record['account'] } : {}),
    ...(Array.isArray(record['accounts']) ? { accounts: record['accounts'].map(String) } : {}),
    ...(typeof record['topic'] === 'string' ? { topic: record['topic'] } : {}),
    ...(typeof record['kind'] === 'string' ? { kind: record['kind'] } : {}),
    ...(typeof record['answer'] === 'boolean' ? { answer: record['answer'] } : {}),
  };
}

/** The records of a JSON-lines log file that belong to the breakdown. */
export function hopRecordsOfFile(path: string): HopRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: HopRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const r = hopRecord(JSON.parse(line) as Record<string, unknown>);
      if (r !== undefined) out.push(r);
    } catch {
      // A line cut short at the end of the file.
    }
  }
  return out;
}

/** One hop: its name, what ends it, and which record of the activation of `account` marks that. */
interface Mark {
  hop: string;
  match(r: HopRecord, account: string): boolean;
}

const MARKS: readonly Mark[] = [
  { hop: 'api_to_wake', match: (r) => r.msg === 'wake accepted' && r.topic === 'accounts' },
  // The feed read that found the account, or, for a wake that named it, its settle scheduled without one.
  { hop: 'wake_to_feed_read', match: (r, a) => (r.msg === 'work feed read' || r.msg === 'account named by a wake') && (r.accounts ?? []).includes(a) },
  { hop: 'feed_read_to_handout_written', match: (r, a) => r.msg === 'account item written' && r.account === a && r.answer === false },
  { hop: 'handout_written_to_sent', match: (r, a) => r.msg === 'assignment sent' && r.account === a && r.kind === 'assignAccount' },
  { hop: 'sent_to_agent', match: (r, a) => r.msg === 'assignment received' && r.account === a },
  { hop: 'agent_client', match: (r, a) => r.msg === 'cluster client ready' && r.account === a },
  { hop: 'agent_check', match: (r, a) => r.msg === 'cluster checked' && r.account === a },
  { hop: 'answer_to_replica', match: (r, a) => r.msg === 'assignment result received' && r.account === a },
  { hop: 'answer_written', match: (r, a) => r.msg === 'account item written' && r.account === a && r.answer === true },
  { hop: 'answer_to_log', match: (r, a) => r.msg === 'assignment result' && r.account === a },
];

const HOP_MESSAGES = new Set(['wake accepted', 'work feed read', 'account named by a wake', 'account item written', 'assignment sent', 'assignment received', 'cluster client ready', 'cluster checked', 'assignment result received', 'assignment result']);

/** One activation: its account and the wall-clock ms its PATCH was sent and its confirmation logged. */
export interface Activation {
  account: string;
  startedAt: number;
  endedAt: number;
}

/** Per hop, the p50 and p99 (ms) over the activations, and how many activations had its mark. */
export function hopBreakdown(activations: readonly Activation[], records: readonly HopRecord[]): Record<string, { n: number; p50_ms: number; p99_ms: number }> {
  const sorted = [...records].sort((a, b) => a.at - b.at);
  const times = new Map<string, number[]>(MARKS.map((m) => [m.hop, []]));
  for (const act of activations) {
    // Records a millisecond either side: their times are whole ms.
    const window = sorted.filter((r) => r.at >= act.startedAt - 1 && r.at <= act.endedAt + 1);
    let previous = act.startedAt;
    for (const mark of MARKS) {
      const found = window.find((r) => r.at >= previous - 1 && mark.match(r, act.account));
      if (found === undefined) continue;
      times.get(mark.hop)?.push(Math.max(0, found.at - previous));
      previous = found.at;
    }
  }
  const out: Record<string, { n: number; p50_ms: number; p99_ms: number }> = {};
  for (const [hop, list] of times) {
    const s = [...list].sort((a, b) => a - b);
    out[hop] = { n: s.length, p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)) };
  }
  return out;
}
