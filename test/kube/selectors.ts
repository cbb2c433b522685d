import { badRequest } from './status.ts';

/**
 * Label and field selectors in the query-string syntax kube-apiserver accepts.
 * Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-joined.
 * Field selectors: `f=v`, `f==v`, `f!=v`, comma-joined, with `\,` `\=` `\\` escapes.
 */
export type Labels = Readonly<Record<string, string>>;

type LabelOp = 'in' | 'notin' | 'exists' | '!exists';

interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export interface Selector<T> {
  readonly empty: boolean;
  matches(subject: T): boolean;
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function parseError(detail: string): never {
  throw badRequest(`unable to parse requirement: ${detail}`);
}

function checkKey(key: string): string {
  if (!LABEL_KEY.test(key)) parseError(`invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (value.length > 63 || !LABEL_VALUE.test(value)) parseError(`invalid label value: "${value}"`);
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function parseRequirement(raw: string): LabelRequirement {
  const text = raw.trim();
  if (text === '') parseError('found \'\', expected: identifier');
  if (text.startsWith('!')) return { key: checkKey(text.slice(1).trim()), op: '!exists', values: [] };
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text);
  if (setMatch !== null) {
    const [, key = '', op, list = ''] = setMatch;
    const values = list.split(',').map((v) => checkValue(v.trim()));
    return { key: checkKey(key), op: op === 'in' ? 'in' : 'notin', values };
  }
  const eqMatch = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(text);
  if (eqMatch !== null) {
    const [, key = '', op, value = ''] = eqMatch;
    return { key: checkKey(key), op: op === '!=' ? 'notin' : 'in', values: [checkValue(value.trim())] };
  }
  if (/^[^\s=!()<>]+$/.test(text)) return { key: checkKey(text), op: 'exists', values: [] };
  return parseError(`found '${text}', expected: in, notin, =, ==, !=, or end of string`);
}

function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, r.key);
  switch (r.op) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case 'in':
      return has && r.values.includes(labels[r.key] ?? '');
    case 'notin':
      return !has || !r.values.includes(labels[r.key] ?? '');
  }
}

export function parseLabelSelector(text: string | null | undefined): Selector<Labels> {
  const source = (text ?? '').trim();
  if (source === '') return { empty: true, matches: () => true };
  const requirements = splitTopLevel(source).map(parseRequirement);
  return { empty: false, matches: (labels) => requirements.every((r) => requirementMatches(r, labels)) };
}

/** Renders `{a: 'b'}` as `a=b`, the form the scale subresource reports in `status.selector`. */
export function formatMatchLabels(labels: Labels): string {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

interface FieldRequirement {
  field: string;
  negate: boolean;
  value: string;
}

function splitEscaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[i + 1];
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, '$1');
}

function parseFieldRequirement(raw: string, supported: ReadonlySet<string>): FieldRequirement {
  const m = /^((?:[^=!\\]|\\.)+)(==|=|!=)((?:.|\n)*)$/.exec(raw);
  if (m === null) throw badRequest(`invalid selector: '${raw}'; can't understand '${raw}'`);
  const [, field = '', op, value = ''] = m;
  const name = unescape(field.trim());
  if (!supported.has(name)) throw badRequest(`field label not supported: ${name}`);
  return { field: name, negate: op === '!=', value: unescape(value) };
}

/** `supported` lists the field labels of the kind; `metadata.name` and `metadata.namespace` always are. */
export function parseFieldSelector(
  text: string | null | undefined,
  supported: readonly string[],
): Selector<Readonly<Record<string, string>>> & { readonly requirements: readonly FieldRequirement[] } {
  const source = (text ?? '').trim();
  if (source === '') return { empty: true, requirements: [], matches: () => true };
  const known = new Set(['metadata.name', 'metadata.namespace', ...supported]);
  const requirements = splitEscaped(source, ',').map((r) => parseFieldRequirement(r.trim(), known));
  return {
    empty: false,
    requirements,
    matches: (fields) => requirements.every((r) => ((fields[r.field] ?? '') === r.value) !== r.negate),
  };
}

/** Reads the string form of a dotted field path (`spec.nodeName`) of an object, as field selectors see it. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}
