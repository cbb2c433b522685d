/**
 * Kubeconfig documents already parsed, by content: the accounts of one cluster share one kubeconfig,
 * and a new account on a cluster the agent knows then costs a read of the file (which tells a changed
 * file from the same one) and a copy, not two YAML parses. Each load gets copies of its own, so what
 * one client's configuration changes (the proxy rules, the exec user taken out) reaches no other.
 *
 * Only the parse is kept: every check (where the file is, what it references and may run) is made
 * again on each load. Entries are keyed by a digest of the contents and the folder their relative
 * paths resolve against; the contents are never a key or a log field. At most `MAX_PARSED` are kept,
 * the least recently used going first.
 */
import { createHash } from 'node:crypto';

/** The parts of a parsed kubeconfig a load starts from. */
export interface ParsedKubeconfig {
  /** The document as plain data (for the checks of an assigned account's kubeconfig); undefined when it cannot be made. */
  js: { value: unknown } | undefined;
  /** `KubeConfig.loadFromOptions` input, paths made absolute against the kubeconfig's folder; undefined when client-node cannot read it. */
  options: { clusters: unknown; contexts: unknown; users: unknown; currentContext: string } | undefined;
}

const MAX_PARSED = 64;

const parsed = new Map<string, ParsedKubeconfig>();
let parses = 0;

function keyOf(text: string, dir: string): string {
  return createHash('sha256').update(dir).update('\0').update(text).digest('base64url');
}

/** A copy of the parse of `text` (relative paths against `dir`), made by `parse` when it is not known. */
export function parsedKubeconfig(text: string, dir: string, parse: () => ParsedKubeconfig): ParsedKubeconfig {
  const key = keyOf(text, dir);
  let entry = parsed.get(key);
  if (entry === undefined) {
    entry = parse();
    parses++;
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value as string);
  } else parsed.delete(key);
  parsed.set(key, entry);
  return structuredClone(entry);
}

/**
 * How many kubeconfigs this process has parsed so far (for tests). A count of the parses, not of the
 * entries kept: those stop at `MAX_PARSED`, where a test's new parse would not change their number.
 */
export function kubeconfigParses(): number {
  return parses;
}
