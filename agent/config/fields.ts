import * as v from 'valibot';

/*
 * Building blocks of the configuration schema. Every message is phrased as "expected ...", because
 * the report prints it as `<key path>: expected ..., got <value>`.
 */

export function text(description: string) {
  return v.pipe(v.string('expected a string'), v.description(description));
}

/** A string that must not be empty or contain whitespace (names, hosts, file paths). */
export function word(description: string, what = 'a non-empty string without spaces') {
  return v.pipe(v.string(`expected ${what}`), v.regex(/^\S+$/, `expected ${what}`), v.description(description));
}

/** A file path: any non-empty string (paths may contain spaces), or an `encryptedFile:` reference. */
export function filePath(description: string, what = 'a file path') {
  return v.pipe(v.string(`expected ${what}`), v.minLength(1, `expected ${what}`), v.description(description));
}

export function flag(defaultValue: boolean, description: string) {
  return v.optional(v.pipe(v.boolean('expected true or false'), v.description(description)), defaultValue);
}

export function integer(min: number, description: string, max?: number) {
  const expected = max === undefined ? `expected an integer >= ${min}` : `expected an integer from ${min} to ${max}`;
  return v.pipe(
    v.number(expected),
    v.integer(expected),
    v.minValue(min, expected),
    v.maxValue(max ?? Number.MAX_SAFE_INTEGER, expected),
    v.description(description),
  );
}

export function port(description: string) {
  return integer(0, `${description} 0 picks a free port.`, 65535);
}

export function list<T extends v.GenericSchema>(item: T, description: string) {
  return v.optional(v.pipe(v.array(item, 'expected a list'), v.description(description)), []);
}

/**
 * `v.object` that also refuses lists: valibot's object schema accepts any JS object, arrays included,
 * which would let `driver: [a, b]` pass as an empty driver section with every default.
 */
export function object<T extends v.ObjectEntries>(entries: T, message: string): v.ObjectSchema<T, string> {
  const base = v.object(entries, message);
  // Rebuilt through _standardSchema so the Standard Schema `validate` also runs the array check.
  return v._standardSchema({
    ...base,
    '~run'(dataset: v.UnknownDataset, config: v.Config<v.BaseIssue<unknown>>) {
      if (!Array.isArray(dataset.value)) return base['~run'](dataset, config);
      v._addIssue(base, 'type', dataset, config);
      return dataset as unknown as ReturnType<(typeof base)['~run']>;
    },
  }) as v.ObjectSchema<T, string>;
}

export function mapping<T extends v.ObjectEntries>(entries: T, description: string) {
  return v.pipe(object(entries, 'expected a mapping of keys to values'), v.description(description));
}

/** A section that may be left out entirely: it then takes every default of its keys. */
export function section<T extends v.ObjectEntries>(entries: T, description: string) {
  const schema = mapping(entries, description);
  // Every key of a section is optional, so an empty mapping is a valid input.
  return v.optional(schema, {} as v.InferInput<typeof schema>);
}

/**
 * A regular expression source matching any of `words` in any letter case, written without the `i`
 * flag so the same pattern works in the JSON Schema for editors (JSON Schema patterns have no flags).
 */
export function anyCasePattern(words: readonly string[]): RegExp {
  const letters = (w: string) =>
    [...w].map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`)).join('');
  return new RegExp(`^(?:${words.map(letters).join('|')})$`);
}
