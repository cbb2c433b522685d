/**
 * Reads a Dockerfile into its instructions (continuation lines joined, comments dropped), enough to
 * check what an image runs and holds without a Docker engine: stages, ENV, USER, EXPOSE, COPY,
 * ENTRYPOINT/CMD and HEALTHCHECK in their JSON (exec) form.
 */
import { readFileSync } from 'node:fs';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

export function parseInstructions(text: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (current !== '' && line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  if (current !== '') throw new Error('the Dockerfile ends inside a continued line');
  return logical.map((l) => {
    const match = /^(\S+)\s*(.*)$/.exec(l);
    return { keyword: match![1]!.toUpperCase(), args: match![2]! };
  });
}

function execForm(instruction: Instruction | undefined, what: string): string[] {
  if (instruction === undefined) throw new Error(`no ${what}`);
  const parsed: unknown = JSON.parse(instruction.args.replace(/^CMD\s+/, ''));
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new Error(`${what} is not in exec (JSON) form`);
  return parsed;
}

export class Dockerfile {
  readonly stages: Stage[] = [];
  readonly args = new Map<string, string>();

  readonly path: string;

  constructor(path: string, text: string) {
    this.path = path;
    for (const instruction of parseInstructions(text)) {
      if (instruction.keyword === 'ARG' && this.stages.length === 0) {
        const [name, value = ''] = instruction.args.split('=');
        this.args.set(name!, value);
        continue;
      }
      if (instruction.keyword === 'FROM') {
        const [image, as, name] = instruction.args.split(/\s+/);
        const expanded = image!.replace(/\$\{(\w+)\}/g, (_, arg: string) => this.args.get(arg) ?? '');
        this.stages.push({ image: expanded, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
        continue;
      }
      const stage = this.stages.at(-1);
      if (stage === undefined) throw new Error(`${instruction.keyword} before FROM`);
      stage.instructions.push(instruction);
    }
  }

  get final(): Stage {
    const stage = this.stages.at(-1);
    if (stage === undefined) throw new Error('no FROM');
    return stage;
  }

  #last(keyword: string): Instruction | undefined {
    return this.final.instructions.filter((i) => i.keyword === keyword).at(-1);
  }

  all(keyword: string): Instruction[] {
    return this.final.instructions.filter((i) => i.keyword === keyword);
  }

  user(): string | undefined {
    return this.#last('USER')?.args;
  }

  exposed(): number[] {
    return this.all('EXPOSE').flatMap((i) => i.args.split(/\s+/).map((p) => Number(p.split('/')[0])));
  }

  env(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const i of this.all('ENV')) {
      for (const match of i.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[match[1]!] = match[2]!.replace(/^"|"$/g, '');
    }
    return env;
  }

  entrypoint(): string[] {
    return execForm(this.#last('ENTRYPOINT'), 'ENTRYPOINT');
  }

  cmd(): string[] {
    const cmd = this.#last('CMD');
    return cmd === undefined ? [] : execForm(cmd, 'CMD');
  }

  /** The command of HEALTHCHECK, options stripped. */
  healthcheck(): string[] {
    const instruction = this.#last('HEALTHCHECK');
    if (instruction === undefined) throw new Error('no HEALTHCHECK');
    const cmdAt = instruction.args.indexOf('CMD ');
    if (cmdAt < 0) throw new Error('HEALTHCHECK without CMD');
    return execForm({ keyword: 'HEALTHCHECK', args: instruction.args.slice(cmdAt + 4) }, 'HEALTHCHECK CMD');
  }

  /** Sources of the final stage's COPY instructions that come from the build context (not another stage). */
  copiedFromContext(): { sources: string[]; destination: string }[] {
    return this.all('COPY')
      .filter((i) => !/--from=/.test(i.args))
      .map((i) => {
        const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
        return { sources: parts.slice(0, -1), destination: parts.at(-1)! };
      });
  }

  /** The TypeScript file `node` runs. */
  entryFile(): string {
    const [program, file] = this.entrypoint();
    if (program !== 'node' || file === undefined || !file.endsWith('.ts')) throw new Error(`${this.path}: ENTRYPOINT is not node <file>.ts`);
    return file;
  }
}

export function dockerfile(path: string): Dockerfile {
  return new Dockerfile(path, readFileSync(path, 'utf8'));
}

function globToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` matches any number of folders, including none.
      out += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/**
 * A .dockerignore as Docker applies it: patterns in order, the last one that matches a path or one
 * of its parent folders decides, `!` admits again.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const admit = l.startsWith('!');
      const pattern = (admit ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      return { admit, regexp: globToRegExp(pattern) };
    });
  return (path: string) => {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let included = true;
    for (const rule of rules) {
      if (prefixes.some((p) => rule.regexp.test(p))) included = rule.admit;
    }
    return included;
  };
}
