import * as v from 'valibot';
import { describeInvalidReference, FILE_REFERENCE_MISPLACED, inspectSecretValue, type SecretForm } from './reference.ts';

/**
 * valibot schemas for strings that may hold secret references. A malformed reference gets one issue
 * listing all its problems; the issue's input is the reference only when its engine is known, because
 * an unknown "engine" may be a secret typed after the prefix by mistake.
 */
function secretString(allowed: { plain: boolean; forms: readonly SecretForm[] }) {
  return v.pipe(
    v.string(),
    v.rawCheck<string>(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const inspection = inspectSecretValue(dataset.value);
      if (inspection.kind === 'plain') {
        if (!allowed.plain) {
          addIssue({
            input: '[plain value]',
            received: 'a plain value',
            expected: allowed.forms.map((f) => `${f}:<engine>!...`).join(' or '),
            message: `must be a secret reference (${allowed.forms.map((f) => `${f}:`).join(' or ')}), not a plain value`,
          });
        }
        return;
      }
      const form = inspection.kind === 'reference' ? inspection.reference.form : inspection.form;
      const safeInput = inspection.kind === 'invalid' && inspection.engine === undefined ? `${form}:[unknown engine]` : dataset.value;
      if (!allowed.forms.includes(form)) {
        addIssue({
          input: safeInput,
          received: `an ${form} reference`,
          message: FILE_REFERENCE_MISPLACED,
        });
        return;
      }
      if (inspection.kind === 'invalid') {
        addIssue({ input: safeInput, received: 'a malformed secret reference', message: describeInvalidReference(inspection) });
      }
    }),
  );
}

/** Any string setting: a plain value or an `encrypted:` reference to one. */
export const secretValueSchema = secretString({ plain: true, forms: ['encrypted'] });

/**
 * A file path setting (a kubeconfig, a certificate): a plain path, an `encrypted:` reference whose
 * value is a path, or an `encryptedFile:` reference whose value becomes the content of a private file.
 */
export const secretFileSchema = secretString({ plain: true, forms: ['encrypted', 'encryptedFile'] });

/** A setting that must not hold a plain secret, such as a kubeconfig reference sent to the API. */
export const secretReferenceSchema = secretString({ plain: false, forms: ['encrypted', 'encryptedFile'] });
