import { SECRET_KEY_PATHS } from './schema.ts';

/** Whether a key path of `vendor-agent.yml` holds a secret, whose value a report shows only by its kind. */
export function isSecretPath(path: string): boolean {
  return SECRET_KEY_PATHS.some((re) => re.test(path));
}
