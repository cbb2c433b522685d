import * as v from 'valibot';

/** The driver's Prometheus endpoint's default port (docs/metrics.md). */
export const DEFAULT_DRIVER_METRICS_PORT = 9464;

/**
 * `metrics` of `vendor-driver.yml`: the driver's Prometheus endpoint (docs/metrics.md). Off unless
 * enabled, like the agent's `prometheus` section; read by the driver, ignored by the API.
 */
export const metricsSectionSchema = v.strictObject({
  enabled: v.optional(v.boolean('must be true or false'), false),
  /** Every interface by default: Prometheus scrapes the task or pod address. */
  host: v.optional(v.pipe(v.string('must be a host name or address'), v.nonEmpty('must be a host name or address')), '0.0.0.0'),
  port: v.optional(
    v.pipe(v.number('must be an integer from 0 to 65535'), v.integer('must be an integer from 0 to 65535'), v.minValue(0, 'must be at least 0'), v.maxValue(65_535, 'must be at most 65535')),
    DEFAULT_DRIVER_METRICS_PORT,
  ),
});

export type DriverMetricsConfig = v.InferOutput<typeof metricsSectionSchema>;
