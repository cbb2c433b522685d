import * as v from 'valibot';
import { describeInvalidReference, inspectSecretValue } from '../secrets/reference.ts';

/**
 * The one rule for a kubeconfig reference, wherever one is accepted (the API's POST and PATCH,
 * vendor-driver.yml, vendor-agent.yml and an assignment the agent receives): it says where a
 * kubeconfig is, never what it holds (docs/api.md#kubeconfig-references).
 *
 * - a secret reference (`encrypted:` / `encryptedFile:`) must be well formed and name an engine the
 *   project has;
 * - nothing may hold a colon followed by a space or ending the value (`key: value`);
 * - anything else is a file path (absolute, or relative to the agent's working folder): one line, no
 *   control characters, and nothing that reads as YAML or JSON: it may not start with `{`, `[`, `"`,
 *   `'` or `---`, and may not hold a kubeconfig key followed by a colon (`token:`, `"clusters":`).
 *
 * Problem sentences never repeat the value: a refused value may be a credential.
 */
export const MAX_KUBECONFIG_REFERENCE = 4096;

export const KUBECONFIG_CONTENTS_PROBLEM = 'must be a file path or a secret reference, not kubeconfig contents';

// Tabs, newlines and other control characters never occur in a path or reference, only in file contents.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const DOCUMENT_START = /^\s*(?:[{["']|---)/;
const MAPPING_SEPARATOR = /:(?:\s|$)/;
const KUBECONFIG_KEY =
  /(?:^|[\s{,"'])(?:apiVersion|kind|clusters|contexts|users|current-context|preferences|cluster|user|server|token|token-file|tokenFile|client-certificate(?:-data)?|client-key(?:-data)?|certificate-authority(?:-data)?|username|password|exec|auth-provider|command|args|env)["']?\s*:/i;

/** What is wrong with `text` as a kubeconfig reference, or undefined when it is one. */
export function kubeconfigReferenceProblem(text: string): string | undefined {
  if (text === '') return 'must not be empty';
  if (text.length > MAX_KUBECONFIG_REFERENCE) return `must be at most ${MAX_KUBECONFIG_REFERENCE} characters`;
  if (CONTROL_CHARACTER.test(text)) return KUBECONFIG_CONTENTS_PROBLEM;
  const inspection = inspectSecretValue(text);
  if (inspection.kind === 'invalid') return describeInvalidReference(inspection);
  if (MAPPING_SEPARATOR.test(text)) return KUBECONFIG_CONTENTS_PROBLEM;
  if (inspection.kind === 'reference') return undefined;
  if (DOCUMENT_START.test(text) || KUBECONFIG_KEY.test(text)) return KUBECONFIG_CONTENTS_PROBLEM;
  return undefined;
}

/**
 * valibot schema of a kubeconfig reference. The issue's input is a placeholder, so nothing that
 * prints issues with their input can print the refused value.
 */
export const kubeconfigReferenceSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_KUBECONFIG_REFERENCE, `must be at most ${MAX_KUBECONFIG_REFERENCE} characters`),
  v.rawCheck<string>(({ dataset, addIssue }) => {
    // Empty and overlong values are reported by the length rules above.
    if (!dataset.typed || dataset.value === '' || dataset.value.length > MAX_KUBECONFIG_REFERENCE) return;
    const problem = kubeconfigReferenceProblem(dataset.value);
    if (problem !== undefined) addIssue({ input: REFUSED_VALUE, received: 'a value that is not a kubeconfig reference', message: problem });
  }),
);

/** The input recorded on an issue about a refused reference, in place of the value. */
export const REFUSED_VALUE = '[value not shown]';
