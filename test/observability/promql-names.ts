/**
 * The metric names a PromQL expression reads, and the names a Prometheus text exposition offers, so
 * a test can check that every dashboard panel and alert rule reads series someone exports.
 *
 * A small tokenizer, not a PromQL parser library: none is installed (the reference parser is Go's,
 * and JavaScript ones would be a new dependency), and names are all this needs. It drops string
 * literals, the insides of `{...}` (label matchers) and `[...]` (ranges, subqueries), the label lists
 * of `by`, `without`, `on`, `ignoring`, `group_left` and `group_right`, numbers and durations, and
 * words that call (functions), aggregation operators and keywords; every identifier left is a metric name.
 * `label_values(metric, label)` of a Grafana variable query is read the same way.
 */
const AGGREGATIONS = ['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio'];
const KEYWORDS = new Set([...AGGREGATIONS, 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2', 'inf', 'nan', 'Inf', 'NaN']);
const LABEL_LISTS = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

export function metricNamesOf(expr: string): string[] {
  let text = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ');
  text = text.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  text = text.replace(LABEL_LISTS, ' $1 ');
  // Grafana's label_values(metric, label): the label is not a metric.
  text = text.replace(/\blabel_values\s*\(\s*([A-Za-z_:][\w:]*)\s*,\s*[A-Za-z_]\w*\s*\)/g, ' $1 ');
  text = text.replace(/\boffset\s+-?\w+/g, ' ');
  const names = new Set<string>();
  const token = /[A-Za-z_:][\w:]*|\d[\d.]*(?:e[+-]?\d+)?\w*|\$\w+|./gy;
  for (let m = token.exec(text); m !== null; m = token.exec(text)) {
    const word = m[0];
    if (!/^[A-Za-z_:]/.test(word) || KEYWORDS.has(word)) continue;
    if (/^\s*\(/.test(text.slice(token.lastIndex))) continue;
    names.add(word);
  }
  return [...names];
}

const SUFFIXES: Record<string, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** Every series name a scrape offers: from its `# TYPE` lines, so a labelled series with no sample yet counts too. */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type !== null) for (const suffix of SUFFIXES[type[2]!] ?? ['']) names.add(`${type[1]}${suffix}`);
    else if (line !== '' && !line.startsWith('#')) names.add(/^[^{\s]+/.exec(line)![0]);
  }
  return names;
}

/** `[expression source, name]` for each name an expression reads that no scrape offers. */
export function unexported(expressions: readonly { source: string; expr: string }[], exported: ReadonlySet<string>): [string, string][] {
  return expressions.flatMap(({ source, expr }) => metricNamesOf(expr).filter((n) => !exported.has(n)).map((n): [string, string] => [source, n]));
}
