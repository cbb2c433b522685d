/**
 * A recording stand-in for the SST v3 globals `sst.config.ts` uses ($config, $app, $interpolate,
 * $jsonStringify, sst.Secret, sst.aws.*, and the few aws.* resources it makes). Components record their name and arguments; outputs are
 * plain values known at once (a table's name is `<app>-<stage>-<Component>`), so what the config
 * computes from them can be checked. Anything the config calls that is not here fails loudly.
 */
import { pathToFileURL } from 'node:url';

export class RecordedOutput<T> {
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
  apply<U>(fn: (value: T) => U): RecordedOutput<U> {
    return new RecordedOutput(fn(this.value));
  }
}

export interface RecordedComponent {
  type: string;
  name: string;
  args: Record<string, unknown>;
  calls: { method: string; args: unknown[] }[];
}

export interface SstConfigModule {
  app(input: { stage: string }): Record<string, unknown>;
  run(): Promise<Record<string, unknown> | void>;
}

/** Replaces every RecordedOutput inside a value by what it holds. */
export function resolved(value: unknown): unknown {
  if (value instanceof RecordedOutput) return resolved(value.value);
  if (Array.isArray(value)) return value.map(resolved);
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolved(v)]));
  }
  return value;
}

export class SstRecorder {
  readonly components: RecordedComponent[] = [];
  stage = 'dev';

  readonly appName: string;
  /** The values `sst secret set` would have stored, by secret name. */
  readonly secrets: Record<string, string>;

  constructor(appName: string, secrets: Record<string, string>) {
    this.appName = appName;
    this.secrets = secrets;
  }

  #component(type: string, name: string, args: Record<string, unknown>, outputs: Record<string, unknown>): Record<string, unknown> {
    if (this.components.some((c) => c.name === name)) throw new Error(`two components named ${name}`);
    const record: RecordedComponent = { type, name, args, calls: [] };
    this.components.push(record);
    const physical = `${this.appName}-${this.stage}-${name}`;
    const base: Record<string, unknown> = {
      urn: new RecordedOutput(`urn:sst:${type}::${name}`),
      arn: new RecordedOutput(`arn:aws:recorded:${physical}`),
      name: new RecordedOutput(physical),
      id: new RecordedOutput(physical),
      ...outputs,
    };
    return new Proxy(base, {
      get: (target, prop) => {
        if (typeof prop !== 'string' || prop in target) return target[prop as string];
        if (prop === 'then') return undefined;
        return (...callArgs: unknown[]) => {
          record.calls.push({ method: prop, args: callArgs });
          return undefined;
        };
      },
    });
  }

  /** Installs the globals; returns a function that removes them. */
  install(): () => void {
    const recorder = this;
    const componentClass = (type: string, outputs: (name: string) => Record<string, unknown> = () => ({})) =>
      function (this: unknown, name: string, args: Record<string, unknown> = {}) {
        return recorder.#component(type, name, args, outputs(name));
      } as unknown as new (name: string, args?: Record<string, unknown>) => unknown;
    const globals: Record<string, unknown> = {
      $config: (config: SstConfigModule) => config,
      $app: {
        get name() {
          return recorder.appName;
        },
        get stage() {
          return recorder.stage;
        },
      },
      $interpolate: (strings: TemplateStringsArray, ...values: unknown[]) =>
        new RecordedOutput(strings.reduce((out, s, i) => out + s + (i < values.length ? String(resolved(values[i])) : ''), '')),
      $jsonStringify: (value: unknown) => new RecordedOutput(JSON.stringify(resolved(value))),
      sst: {
        Secret: function (this: unknown, name: string, placeholder?: string) {
          const value = recorder.secrets[name] ?? placeholder;
          if (value === undefined) throw new Error(`secret ${name} has no value: sst deploy would stop here`);
          return recorder.#component('sst.Secret', name, placeholder === undefined ? {} : { placeholder }, { value: new RecordedOutput(value) });
        },
        aws: {
          Dynamo: componentClass('sst.aws.Dynamo'),
          Function: componentClass('sst.aws.Function'),
          ApiGatewayV2: componentClass('sst.aws.ApiGatewayV2', (name) => ({ url: new RecordedOutput(`https://${name.toLowerCase()}.execute-api.recorded`) })),
          Vpc: componentClass('sst.aws.Vpc', (name) => ({
            privateSubnets: new RecordedOutput([`${name}-private-a`, `${name}-private-b`]),
            securityGroups: new RecordedOutput([`${name}-security-group`]),
          })),
          Cluster: componentClass('sst.aws.Cluster'),
          Service: componentClass('sst.aws.Service', (name) => ({ url: new RecordedOutput(`https://${name.toLowerCase()}.recorded/`) })),
        },
      },
      aws: {
        ec2: { SecurityGroup: componentClass('aws.ec2.SecurityGroup') },
        vpc: { SecurityGroupIngressRule: componentClass('aws.vpc.SecurityGroupIngressRule') },
      },
    };
    const previous = new Map(Object.keys(globals).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)]));
    for (const [k, v] of Object.entries(globals)) Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
    return () => {
      for (const [k, descriptor] of previous) {
        if (descriptor === undefined) Reflect.deleteProperty(globalThis, k);
        else Object.defineProperty(globalThis, k, descriptor);
      }
    };
  }

  /** Runs the config's `run()` for a stage, with the deploy-time environment given, and returns its outputs. */
  async run(config: SstConfigModule, stage: string, env: Record<string, string>): Promise<Record<string, unknown>> {
    this.components.length = 0;
    this.stage = stage;
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      return (resolved(await config.run()) as Record<string, unknown> | undefined) ?? {};
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  /** The one component of `type`; throws unless there is exactly one. */
  single(type: string): RecordedComponent {
    const found = this.components.filter((c) => c.type === type);
    if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
    return found[0]!;
  }

  named(name: string): RecordedComponent {
    const found = this.components.find((c) => c.name === name);
    if (found === undefined) throw new Error(`no component named ${name}; have ${this.components.map((c) => c.name).join(', ')}`);
    return found;
  }

  /** Names of the components in a component's `link` list. */
  linkedNames(component: RecordedComponent): string[] {
    const links = (component.args.link ?? []) as { urn: RecordedOutput<string> }[];
    return links.map((l) => {
      const owner = this.components.find((c) => `urn:sst:${c.type}::${c.name}` === l.urn.value);
      if (owner === undefined) throw new Error(`${component.name} links something that is not a component`);
      return owner.name;
    });
  }
}

/** Applies a recorded `transform.<key>` (function or object) to the arguments SST would start from. */
export function applyTransform(component: RecordedComponent, key: string, start: Record<string, unknown>): Record<string, unknown> {
  const transform = (component.args.transform as Record<string, unknown> | undefined)?.[key];
  const args = structuredClone(start);
  if (typeof transform === 'function') transform(args, {}, component.name);
  else if (typeof transform === 'object' && transform !== null) Object.assign(args, transform);
  return args;
}

export async function loadSstConfig(path: string): Promise<SstConfigModule> {
  const module = (await import(pathToFileURL(path).href)) as { default: SstConfigModule };
  return module.default;
}
