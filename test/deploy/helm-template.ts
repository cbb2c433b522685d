/**
 * A renderer for the subset of Helm's Go templates the chart uses, so the chart's output can be
 * checked on a machine without the helm binary: text and `{{ }}` actions with `-` trimming,
 * comments, define/include, if/else if/else, with, range over a list with a variable, pipelines, and
 * the functions listed in FUNCTIONS with Helm's meaning (toYaml sorts keys like sigs.k8s.io/yaml and
 * drops the final newline). Anything else throws, naming it, so the chart cannot silently use a
 * construct this renderer would get wrong.
 */
import { stringify } from 'yaml';

type Value = unknown;
type Scope = { dot: Value; root: Value; vars: Map<string, Value> };

type Node =
  | { type: 'text'; text: string }
  | { type: 'action'; expr: string }
  | { type: 'if'; branches: { cond: string | undefined; body: Node[] }[] }
  | { type: 'with'; expr: string; body: Node[]; otherwise: Node[] }
  | { type: 'range'; variable: string | undefined; expr: string; body: Node[] };

export class TemplateError extends Error {}

/** What `fail` and `required` raise: Helm stops rendering with this message. */
export class RenderFailure extends Error {}

function lex(source: string): ({ type: 'text'; text: string } | { type: 'action'; body: string })[] {
  const out: ({ type: 'text'; text: string } | { type: 'action'; body: string })[] = [];
  let rest = source;
  while (rest.length > 0) {
    const open = rest.indexOf('{{');
    if (open < 0) {
      out.push({ type: 'text', text: rest });
      break;
    }
    let text = rest.slice(0, open);
    const close = rest.indexOf('}}', open);
    if (close < 0) throw new TemplateError('unclosed action');
    let body = rest.slice(open + 2, close);
    rest = rest.slice(close + 2);
    if (body.startsWith('-') && /^-\s/.test(body)) {
      text = text.replace(/\s+$/, '');
      body = body.slice(1);
    }
    if (body.endsWith('-') && /\s-$/.test(body)) {
      body = body.slice(0, -1);
      rest = rest.replace(/^\s+/, '');
    }
    out.push({ type: 'text', text });
    out.push({ type: 'action', body: body.trim() });
  }
  return out;
}

function parse(source: string, defines: Map<string, Node[]>): Node[] {
  const tokens = lex(source);
  let i = 0;
  const block = (until: Set<string>): { nodes: Node[]; end: string } => {
    const nodes: Node[] = [];
    while (i < tokens.length) {
      const t = tokens[i++]!;
      if (t.type === 'text') {
        if (t.text !== '') nodes.push({ type: 'text', text: t.text });
        continue;
      }
      const body = t.body;
      if (body.startsWith('/*')) {
        if (!body.endsWith('*/')) throw new TemplateError(`bad comment ${body}`);
        continue;
      }
      const keyword = body.split(/\s+/)[0]!;
      if (until.has(keyword) || (keyword === 'else' && until.has('else'))) return { nodes, end: body };
      if (keyword === 'define') {
        const name = JSON.parse(body.slice(6).trim()) as string;
        defines.set(name, block(new Set(['end'])).nodes);
      } else if (keyword === 'if') {
        const branches: { cond: string | undefined; body: Node[] }[] = [];
        let cond: string | undefined = body.slice(2).trim();
        for (;;) {
          const { nodes: b, end } = block(new Set(['end', 'else']));
          branches.push({ cond, body: b });
          if (end === 'end') break;
          cond = end.startsWith('else if ') ? end.slice(8).trim() : undefined;
        }
        nodes.push({ type: 'if', branches });
      } else if (keyword === 'with') {
        const { nodes: b, end } = block(new Set(['end', 'else']));
        const otherwise = end === 'end' ? [] : block(new Set(['end'])).nodes;
        nodes.push({ type: 'with', expr: body.slice(4).trim(), body: b, otherwise });
      } else if (keyword === 'range') {
        const m = /^range\s+(?:(\$\w+)\s*:=\s*)?(.+)$/.exec(body);
        if (m === null) throw new TemplateError(`unsupported range: ${body}`);
        nodes.push({ type: 'range', variable: m[1], expr: m[2]!, body: block(new Set(['end'])).nodes });
      } else if (['end', 'else', 'template', 'block'].includes(keyword)) {
        throw new TemplateError(`unexpected ${keyword}`);
      } else {
        nodes.push({ type: 'action', expr: body });
      }
    }
    if (until.size > 0) throw new TemplateError(`missing {{ end }}`);
    return { nodes, end: '' };
  };
  return block(new Set()).nodes;
}

function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

function str(v: Value): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') throw new TemplateError(`cannot print a ${Array.isArray(v) ? 'list' : 'map'} as text (use toYaml)`);
  return String(v);
}

function toYaml(v: Value): string {
  if (v === undefined || v === null) return 'null';
  return stringify(v, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
}

const indentLines = (n: number, s: string) => s.split('\n').map((l) => ' '.repeat(n) + l).join('\n');

type Fn = (args: Value[], render: Renderer) => Value;

const FUNCTIONS: Record<string, Fn> = {
  default: ([d, v]) => (truthy(v) ? v : d),
  trunc: ([n, s]) => str(s).slice(0, Number(n)),
  trimSuffix: ([suffix, s]) => (str(s).endsWith(str(suffix)) ? str(s).slice(0, -str(suffix).length) : str(s)),
  contains: ([needle, s]) => str(s).includes(str(needle)),
  printf: ([format, ...args]) => {
    let k = 0;
    return str(format).replace(/%[sdv]/g, () => str(args[k++]));
  },
  quote: (args) => args.map((a) => JSON.stringify(str(a))).join(' '),
  toYaml: ([v]) => toYaml(v),
  nindent: ([n, s]) => `\n${indentLines(Number(n), str(s))}`,
  indent: ([n, s]) => indentLines(Number(n), str(s)),
  required: ([message, v]) => {
    if (!truthy(v) && v !== false && v !== 0) throw new RenderFailure(str(message));
    return v;
  },
  fail: ([message]) => {
    throw new RenderFailure(str(message));
  },
  not: ([v]) => !truthy(v),
  eq: ([a, ...bs]) => bs.some((b) => a === b),
  has: ([needle, list]) => Array.isArray(list) && list.includes(needle),
  list: (args) => args,
  include: ([name, dot], render) => render.include(str(name), dot),
};

/** Splits an expression into tokens: strings, numbers, parentheses, pipes, words. */
function tokenize(expr: string): string[] {
  const tokens: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|\(|\)|\||[^\s()|]+)/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(expr)) !== null) tokens.push(m[1]!);
  if (tokens.join('').replace(/\s/g, '') !== expr.replace(/\s/g, '')) throw new TemplateError(`cannot read expression: ${expr}`);
  return tokens;
}

export class Renderer {
  readonly defines = new Map<string, Node[]>();
  readonly #root: Value;

  constructor(root: Value) {
    this.#root = root;
  }

  /** Reads a file's `define`s; returns the file's own output nodes. */
  load(source: string): Node[] {
    return parse(source, this.defines);
  }

  include(name: string, dot: Value): string {
    const body = this.defines.get(name);
    if (body === undefined) throw new TemplateError(`no template named ${name}`);
    return this.#nodes(body, { dot, root: this.#root, vars: new Map([['$', this.#root]]) });
  }

  render(source: string): string {
    return this.#nodes(this.load(source), { dot: this.#root, root: this.#root, vars: new Map([['$', this.#root]]) });
  }

  #nodes(nodes: Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      switch (node.type) {
        case 'text':
          out += node.text;
          break;
        case 'action':
          out += str(this.#eval(node.expr, scope));
          break;
        case 'if': {
          const branch = node.branches.find((b) => b.cond === undefined || truthy(this.#eval(b.cond, scope)));
          if (branch !== undefined) out += this.#nodes(branch.body, scope);
          break;
        }
        case 'with': {
          const value = this.#eval(node.expr, scope);
          out += truthy(value) ? this.#nodes(node.body, { ...scope, dot: value }) : this.#nodes(node.otherwise, scope);
          break;
        }
        case 'range': {
          const list = this.#eval(node.expr, scope);
          if (list === undefined || list === null) break;
          if (!Array.isArray(list)) throw new TemplateError(`range over something that is not a list: ${node.expr}`);
          for (const item of list) {
            const vars = new Map(scope.vars);
            if (node.variable !== undefined) vars.set(node.variable, item);
            out += this.#nodes(node.body, { ...scope, dot: item, vars });
          }
          break;
        }
      }
    }
    return out;
  }

  #eval(expr: string, scope: Scope): Value {
    const tokens = tokenize(expr);
    let pos = 0;
    const field = (base: Value, path: string): Value =>
      path
        .split('.')
        .filter((p) => p !== '')
        .reduce<Value>((o, key) => (typeof o === 'object' && o !== null ? (o as Record<string, Value>)[key] : undefined), base);
    const operand = (): Value => {
      const t = tokens[pos++];
      if (t === undefined) throw new TemplateError(`expression ends early: ${expr}`);
      if (t === '(') {
        const v = pipeline();
        if (tokens[pos++] !== ')') throw new TemplateError(`missing ) in ${expr}`);
        return v;
      }
      if (t.startsWith('"')) return JSON.parse(t);
      if (/^-?\d+$/.test(t)) return Number(t);
      if (t === 'true' || t === 'false') return t === 'true';
      if (t === '.') return scope.dot;
      if (t.startsWith('.')) return field(scope.dot, t);
      if (t.startsWith('$')) {
        const [name, ...rest] = t.split('.');
        if (!scope.vars.has(name!)) throw new TemplateError(`undefined variable ${name}`);
        return field(scope.vars.get(name!), rest.join('.'));
      }
      throw new TemplateError(`unexpected ${t} in ${expr}`);
    };
    const command = (piped: Value[] | undefined): Value => {
      const t = tokens[pos];
      if (t !== undefined && /^[a-zA-Z]\w*$/.test(t) && !['true', 'false'].includes(t)) {
        pos++;
        const fn = FUNCTIONS[t];
        if (fn === undefined) throw new TemplateError(`function ${t} is not supported`);
        const args: Value[] = [];
        while (pos < tokens.length && tokens[pos] !== '|' && tokens[pos] !== ')') args.push(operand());
        return fn(piped === undefined ? args : [...args, ...piped], this);
      }
      if (piped !== undefined) throw new TemplateError(`cannot pipe into ${t}`);
      return operand();
    };
    const pipeline = (): Value => {
      let value = command(undefined);
      while (tokens[pos] === '|') {
        pos++;
        value = command([value]);
      }
      return value;
    };
    const value = pipeline();
    if (pos !== tokens.length) throw new TemplateError(`unexpected ${tokens[pos]} in ${expr}`);
    return value;
  }
}

/** Every `.Values.a.b` path a template names (also through `$.Values`). */
export function valuesPaths(source: string): string[] {
  return [...new Set([...source.matchAll(/(?:^|[\s($])\$?\.Values((?:\.\w+)+)/g)].map((m) => m[1]!.slice(1)))];
}
