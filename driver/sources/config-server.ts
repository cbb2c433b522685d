import * as v from 'valibot';
import { parseOrThrow } from '../../shared/accounts/validate.ts';
import { parseYamlText } from '../../shared/driver-config/load.ts';
import { kubernetesSectionSchema } from '../../shared/driver-config/schema.ts';
import type { SourcesConfig } from '../../shared/driver-config/sources.ts';
import type { S3ObjectReader } from '../../shared/sources/s3-object.ts';
import type { DefinitionSource } from '../../shared/table/sources/definition-sources.ts';

type ConfigServerConfig = NonNullable<SourcesConfig['configServer']>;

/**
 * The object's document: the `kubernetes` section of `vendor-driver.yml`, so accounts move between the
 * file and the server as they are. `kubernetes` is required: an empty or cut-off object is an error,
 * which keeps the accounts synced last, never a reason to remove them all.
 */
const configServerDocumentSchema = v.strictObject({ kubernetes: kubernetesSectionSchema });

/** The configuration server: account definitions in one S3 object, synced as `config-server`. */
export function configServerSource(config: ConfigServerConfig, reader: Pick<S3ObjectReader, 'read'>): DefinitionSource {
  const { region, bucket, key } = config.s3;
  const where = `config server s3://${bucket}/${key}`;
  return {
    id: 'config-server',
    kind: 'config-server',
    async load() {
      const bytes = await reader.read({ region, bucket, key });
      return parseOrThrow(configServerDocumentSchema, parseYamlText(bytes.toString('utf8'), where), where).kubernetes.accounts;
    },
  };
}
