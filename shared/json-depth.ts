/**
 * Nesting depth of JSON text and of parsed values, measured without recursion, so that a value nested
 * deeper than the stack (a body of 100,000 `[`) is refused before anything recursive touches it:
 * `JSON.parse` itself copes with such text, but `JSON.stringify`, the canonical JSON of the request
 * hash and schema validation all recurse.
 */

/** Most levels of arrays and objects one JSON body (or manifest) may nest (docs/api.md). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `max`. Brackets inside strings do not count;
 * the text need not be valid JSON (a malformed one is refused by the parser afterwards).
 */
export function jsonTextTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/** Whether a parsed value nests arrays and objects deeper than `max` (a walk with its own stack). */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}
