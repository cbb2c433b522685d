import * as v from 'valibot';
import { accountSettingsSchema } from '../accounts/settings.ts';
import { apiSectionSchema } from './api.ts';
import { metricsSectionSchema } from './metrics.ts';
import { sourcesSectionSchema } from './sources.ts';

/**
 * The control plane's own config file, `vendor-driver.yml`. Its `kubernetes.accounts[]` are the
 * driver-defined (native) accounts, with the same per-account keys as the agent's file (docs/agent-config.md#per-account-kubernetesaccounts), so
 * migrating an account is a copy. Other sections (the gRPC endpoint, auth) join through
 * `driverConfigSchemaWith`, so the file stays one strict object that refuses unknown keys.
 */
export const kubernetesSectionSchema = v.strictObject({
  accounts: v.optional(v.array(accountSettingsSchema), []),
});

export const driverConfigEntries = {
  kubernetes: v.optional(kubernetesSectionSchema, { accounts: [] }),
  /** The management API's caller authentication (`api.auth`); read by the API, ignored by the driver. */
  api: v.optional(apiSectionSchema, { auth: { accountManagerRoles: [] } }),
  /** The configuration server and plugins (`sources`); read by the driver, ignored by the API. */
  sources: v.optional(sourcesSectionSchema),
  /** The driver's Prometheus endpoint (`metrics`, docs/metrics.md); read by the driver, ignored by the API. */
  metrics: v.optional(metricsSectionSchema),
};

export function driverConfigSchemaWith<TExtra extends v.ObjectEntries>(extra: TExtra) {
  return v.strictObject({ ...driverConfigEntries, ...extra });
}

export const driverConfigSchema = driverConfigSchemaWith({});

export type DriverConfig = v.InferOutput<typeof driverConfigSchema>;
