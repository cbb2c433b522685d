import { describeInvalidReference, inspectSecretValue } from '../../shared/secrets/reference.ts';
import { formatPath, hiddenValue, type ConfigProblem, type PathKey } from '../../shared/config-report/problems.ts';

/**
 * Every string of the file may be a secret reference (docs/secrets.md), so every string that starts
 * like one must be one the agent can resolve: a known engine with its keys. Reported without the
 * value, which may be a secret typed after the prefix. Works on the raw file, so these problems are
 * listed with the schema's.
 */
export function secretReferenceProblems(input: unknown): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const walk = (value: unknown, keys: PathKey[]): void => {
    if (typeof value === 'string') {
      const inspection = inspectSecretValue(value);
      if (inspection.kind === 'invalid') {
        out.push({ path: formatPath(keys), message: `expected a secret reference the agent can resolve: ${describeInvalidReference(inspection)}`, value: hiddenValue(value) });
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...keys, i]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, [...keys, key]);
    }
  };
  walk(input, []);
  return out;
}
