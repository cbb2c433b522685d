import { basename, extname } from 'node:path';
import * as v from 'valibot';
import { awsRegion, s3Bucket } from '../secrets/engines.ts';

/**
 * `sources` of `vendor-driver.yml`: the driver's definition sources besides the file's own
 * `kubernetes.accounts[]` (docs/deploy.md#account-definition-sources): a configuration server (an S3
 * object) and plugins (ES modules), each read again every `refreshIntervalMs`.
 */
export const DEFAULT_SOURCE_REFRESH_INTERVAL_MS = 30_000;

const int = (min: number, max: number) =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));
const text = (message: string) => v.pipe(v.string(message), v.nonEmpty(message));
// A rule of the secret references (shared/secrets/engines.ts), with its own sentence: the bucket and region
// of the configuration server follow the same rules as those of an s3 reference.
const rule = (check: (value: string) => string | undefined) => {
  const message = check('') ?? 'is not valid';
  return v.pipe(v.string(message), v.check((value) => check(value) === undefined, message));
};

const HTTP_URL = 'must be an http or https URL such as https://s3.eu-west-1.amazonaws.com';

export const s3ObjectSourceSchema = v.strictObject({
  region: rule(awsRegion),
  bucket: rule(s3Bucket),
  key: text('must be the key of the object'),
  /** Another S3 endpoint (a VPC endpoint, an S3-compatible store); the SDK's own settings when absent. */
  endpoint: v.optional(v.pipe(v.string(HTTP_URL), v.check((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), HTTP_URL))),
});

export const PLUGIN_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const PLUGIN_NAME = 'must be 1 to 64 letters, digits, ".", "_" or "-"';

const pluginEntrySchema = v.strictObject({
  /** The ES module, relative to the folder of the config file. */
  path: text('must be the path of an ES module'),
  /** The source id is `plugin:<name>`; the file name without its extension when absent. */
  name: v.optional(v.pipe(v.string(PLUGIN_NAME), v.regex(PLUGIN_NAME_PATTERN, PLUGIN_NAME))),
  /** Against the agent's 1000: lower wins (docs/api.md#precedence); absent, the agent wins. */
  precedence: v.optional(int(0, 1_000_000)),
  /** Handed to the plugin's function as it is. */
  options: v.optional(v.record(v.string(), v.unknown(), 'must be a mapping'), {}),
});

export type PluginEntry = v.InferOutput<typeof pluginEntrySchema>;

/** The name a plugin entry syncs under: its `name`, else its file name without the extension. */
export function pluginName(entry: Pick<PluginEntry, 'path' | 'name'>): string {
  return entry.name ?? basename(entry.path, extname(entry.path));
}

export const sourcesSectionSchema = v.pipe(
  v.strictObject({
    refreshIntervalMs: v.optional(int(100, 86_400_000), DEFAULT_SOURCE_REFRESH_INTERVAL_MS),
    configServer: v.optional(v.strictObject({ s3: s3ObjectSourceSchema })),
    plugins: v.optional(v.array(pluginEntrySchema, 'must be a list of plugins'), []),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Map<string, number>();
    dataset.value.plugins.forEach((entry, i) => {
      const name = pluginName(entry);
      const first = seen.get(name);
      if (!PLUGIN_NAME_PATTERN.test(name)) addIssue({ message: `names plugin "${name}": give a name that ${PLUGIN_NAME.replace('must be', 'is')}`, path: pathTo(dataset.value, i, 'path') });
      else if (first !== undefined) addIssue({ message: `duplicate plugin name "${name}" (first at plugins[${first}]); give each its own name`, path: pathTo(dataset.value, i, entry.name === undefined ? 'path' : 'name') });
      else seen.set(name, i);
    });
  }),
);

// Valibot's issue path for plugins[i].<key>: one item per step, each with the value it holds.
function pathTo(section: { plugins: readonly PluginEntry[] }, index: number, key: 'path' | 'name'): [v.ObjectPathItem] {
  const plugins = section.plugins;
  const entry = plugins[index];
  return [
    { type: 'object', origin: 'value', input: section, key: 'plugins', value: plugins },
    { type: 'array', origin: 'value', input: plugins, key: index, value: entry },
    { type: 'object', origin: 'value', input: entry, key, value: entry?.[key] },
  ] as unknown as [v.ObjectPathItem];
}

export type SourcesConfig = v.InferOutput<typeof sourcesSectionSchema>;
