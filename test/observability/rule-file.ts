/**
 * The shape of a Prometheus rule file (groups of alerting and recording rules), as valibot schemas,
 * so the committed rule files are checked as Prometheus would read them: unknown keys refused.
 */
import * as v from 'valibot';
import { parse } from 'yaml';

const duration = v.pipe(v.string(), v.regex(/^(\d+(ms|s|m|h|d|w|y))+$/, 'must be a Prometheus duration such as 5m'));
const labels = v.record(v.pipe(v.string(), v.regex(/^[A-Za-z_]\w*$/)), v.string());

const alertingRule = v.strictObject({
  alert: v.pipe(v.string(), v.regex(/^[A-Za-z_]\w*$/, 'must be an alert name')),
  expr: v.pipe(v.string(), v.nonEmpty()),
  for: v.optional(duration),
  keep_firing_for: v.optional(duration),
  labels: v.optional(labels),
  annotations: v.optional(labels),
});

const recordingRule = v.strictObject({
  record: v.pipe(v.string(), v.regex(/^[A-Za-z_:][\w:]*$/, 'must be a metric name')),
  expr: v.pipe(v.string(), v.nonEmpty()),
  labels: v.optional(labels),
});

export const ruleFileSchema = v.strictObject({
  groups: v.array(
    v.strictObject({
      name: v.pipe(v.string(), v.nonEmpty()),
      interval: v.optional(duration),
      limit: v.optional(v.number()),
      rules: v.array(v.union([alertingRule, recordingRule])),
    }),
  ),
});

export type RuleFile = v.InferOutput<typeof ruleFileSchema>;

export function parseRuleFile(text: string): RuleFile {
  return v.parse(ruleFileSchema, parse(text));
}
