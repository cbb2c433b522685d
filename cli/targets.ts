/**
 * Objects named on the command line as `KIND/NAME` (`deployment/web`), as kubectl names them. The
 * API needs each object's apiVersion: `--api-version` gives it, else it is known for the common
 * built-in kinds below.
 */
import * as v from 'valibot';
import { objectRefSchema, type ObjectRefJson } from '../shared/operations/request.ts';
import { toIssues } from '../shared/accounts/validate.ts';
import { usageError } from './errors.ts';

const KNOWN_KINDS: Readonly<Record<string, readonly [kind: string, apiVersion: string]>> = Object.fromEntries(
  (
    [
      ['Deployment', 'apps/v1'],
      ['StatefulSet', 'apps/v1'],
      ['DaemonSet', 'apps/v1'],
      ['ReplicaSet', 'apps/v1'],
      ['Pod', 'v1'],
      ['Service', 'v1'],
      ['ConfigMap', 'v1'],
      ['Secret', 'v1'],
      ['ServiceAccount', 'v1'],
      ['PersistentVolumeClaim', 'v1'],
      ['Namespace', 'v1'],
      ['Job', 'batch/v1'],
      ['CronJob', 'batch/v1'],
      ['Ingress', 'networking.k8s.io/v1'],
      ['HorizontalPodAutoscaler', 'autoscaling/v2'],
    ] as const
  ).map(([kind, apiVersion]) => [kind.toLowerCase(), [kind, apiVersion]]),
);

/** `KIND/NAME` as an object reference; the namespace, when given, applies to every target. */
export function parseTarget(text: string, options: { apiVersion?: string | undefined; namespace?: string | undefined }): ObjectRefJson {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) throw usageError(`${JSON.stringify(text)} is not KIND/NAME (for example deployment/web)`);
  const kindText = text.slice(0, slash);
  const known = KNOWN_KINDS[kindText.toLowerCase()];
  const apiVersion = options.apiVersion ?? known?.[1];
  if (apiVersion === undefined) throw usageError(`the API version of kind ${kindText} is not known here: give it with --api-version (for example --api-version argoproj.io/v1alpha1)`);
  const ref = {
    apiVersion,
    kind: known?.[0] ?? kindText,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    name: text.slice(slash + 1),
  };
  const parsed = v.safeParse(objectRefSchema, ref, { abortEarly: false });
  if (!parsed.success) throw usageError(`${JSON.stringify(text)} is not a valid object`, toIssues(parsed.issues));
  return parsed.output;
}
