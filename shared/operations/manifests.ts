/**
 * Manifests as an operation request carries them: a JSON list of objects, or a string of YAML with
 * one or more documents. Either may hold `kind: List` objects, whose items count as manifests of their
 * own. Every manifest must be an object with `apiVersion`, `kind` and `metadata.name` (server-side
 * apply needs a name; `generateName` cannot be applied), and no object may appear twice.
 */
import { CST, Lexer, parseAllDocuments } from 'yaml';
import { yamlValue } from '../yaml-value.ts';
import type { Issue } from '../errors.ts';
import { MAX_JSON_DEPTH, valueTooDeep } from '../json-depth.ts';
import { apiVersionPattern, kindPattern, namespacePattern, objectNameProblem } from './names.ts';

export interface KubeManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Where a manifest came from in the request: `manifests[2]`, `manifests[0].items[3]`. */
interface Located {
  value: unknown;
  path: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parser's message without its position (given separately) and code frame. */
function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * Whether YAML text nests deeper than `MAX_JSON_DEPTH` in the ways that cost the parser most: flow
 * collections (`[[[...`, `{a: {a: ...`) or block sequence entries on one line (`- - - ...`). The
 * lexer yields tokens one at a time and recurses into nothing, so a deep text stops it early, before
 * the parser spends seconds on it; deeper nesting by indentation costs a line per level and is left
 * to the check of the parsed value.
 */
function yamlTooDeep(text: string): boolean {
  let flow = 0;
  let entries = 0;
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token);
    if (type === 'flow-seq-start' || type === 'flow-map-start') flow++;
    else if (type === 'flow-seq-end' || type === 'flow-map-end') flow--;
    else if (type === 'seq-item-ind') entries++;
    else if (type === 'newline') entries = 0;
    if (flow > MAX_JSON_DEPTH || entries > MAX_JSON_DEPTH) return true;
  }
  return false;
}

function fromYaml(text: string, path: string, issues: Issue[]): Located[] {
  const out: Located[] = [];
  if (yamlTooDeep(text)) {
    issues.push({ path, message: `YAML nested too deeply: at most ${MAX_JSON_DEPTH} levels` });
    return out;
  }
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  // A stream with a syntax error the parser cannot split is returned as one errored document.
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const at = `${path}[${i}]`;
    // The parser recurses, and says so when a document nests deeper than its stack: that is a document nested too deeply.
    if (doc.errors.some((e) => e.message.startsWith('Maximum call stack size exceeded'))) {
      issues.push({ path: at, message: `YAML document ${i + 1} is nested too deeply: at most ${MAX_JSON_DEPTH} levels` });
      return;
    }
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const line = e.linePos?.[0]?.line;
        issues.push({ path: at, message: `YAML document ${i + 1} is not valid YAML${line === undefined ? '' : ` (line ${line})`}: ${firstLine(e.message)}` });
      }
      return;
    }
    const read = yamlValue(doc);
    if ('problem' in read) {
      issues.push({ path: at, message: `YAML document ${i + 1} cannot be read: ${read.problem}` });
      return;
    }
    const { value } = read;
    // Empty documents (a leading or trailing `---`) hold nothing to apply.
    if (value === null || value === undefined) return;
    // The same bound as a JSON body's, before the request hash and the stored copy recurse into it.
    if (valueTooDeep(value)) {
      issues.push({ path: at, message: `YAML document ${i + 1} is nested too deeply: at most ${MAX_JSON_DEPTH} levels` });
      return;
    }
    out.push({ value, path: at });
  });
  return out;
}

/** Items of `kind: List` objects count as manifests of their own. */
function expandLists(located: Located[]): Located[] {
  const out: Located[] = [];
  for (const m of located) {
    const v = m.value;
    if (isObject(v) && v.kind === 'List' && Array.isArray(v.items)) {
      v.items.forEach((item, j) => out.push({ value: item, path: `${m.path}.items[${j}]` }));
    } else out.push(m);
  }
  return out;
}

function manifestProblems(value: unknown): { field: string; message: string }[] {
  if (!isObject(value)) return [{ field: '', message: 'must be an object (a Kubernetes manifest)' }];
  const problems: { field: string; message: string }[] = [];
  if (typeof value.apiVersion !== 'string' || value.apiVersion === '') problems.push({ field: '.apiVersion', message: 'is required' });
  else if (!apiVersionPattern.test(value.apiVersion)) problems.push({ field: '.apiVersion', message: `"${value.apiVersion.slice(0, 100)}" is not an API version (such as v1 or apps/v1)` });
  if (typeof value.kind !== 'string' || value.kind === '') problems.push({ field: '.kind', message: 'is required' });
  else if (!kindPattern.test(value.kind)) problems.push({ field: '.kind', message: `"${value.kind.slice(0, 100)}" is not a kind (such as Deployment)` });
  const meta = value.metadata;
  if (!isObject(meta)) {
    problems.push({ field: '.metadata', message: 'is required, with a name' });
    return problems;
  }
  if (typeof meta.name !== 'string' || meta.name === '') {
    const hint = meta.generateName === undefined ? '' : ' (generateName cannot be used: server-side apply needs the name)';
    problems.push({ field: '.metadata.name', message: `is required${hint}` });
  } else {
    const problem = objectNameProblem(meta.name);
    if (problem !== undefined) problems.push({ field: '.metadata.name', message: problem });
  }
  if (meta.namespace !== undefined && (typeof meta.namespace !== 'string' || !namespacePattern.test(meta.namespace))) {
    problems.push({ field: '.metadata.namespace', message: 'must be a namespace name (lower-case letters, digits and "-", at most 63 characters)' });
  }
  return problems;
}

/**
 * The manifests of a request, in order, with every problem found. `input` is the JSON list or the
 * YAML text; `path` prefixes the issue paths. Issue paths name the position in the request (the YAML
 * document's index for text); the returned list is what the outcomes of the operation are indexed by.
 */
export function parseManifests(input: string | readonly unknown[], path = 'manifests'): { manifests: KubeManifest[]; paths: string[]; issues: Issue[] } {
  const issues: Issue[] = [];
  const located = expandLists(
    typeof input === 'string' ? fromYaml(input, path, issues) : input.map((value, i) => ({ value, path: `${path}[${i}]` })),
  );
  const manifests: KubeManifest[] = [];
  const paths: string[] = [];
  for (const m of located) {
    const problems = manifestProblems(m.value);
    for (const p of problems) issues.push({ path: `${m.path}${p.field}`, message: p.message });
    if (problems.length === 0) {
      manifests.push(m.value as KubeManifest);
      paths.push(m.path);
    }
  }
  if (issues.length === 0 && manifests.length === 0) issues.push({ path, message: 'holds no manifest' });
  return { manifests, paths, issues };
}
