/** How results are printed: `-o table` (the default, readable columns), `json` or `yaml` (the API's answer as it is). */
import { stringify } from 'yaml';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A table: the column headings and each row's cells. */
export interface Table {
  columns: readonly string[];
  rows: readonly (readonly string[])[];
}

export function renderTable({ columns, rows }: Table): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map(line)].join('\n') + '\n';
}

/** The text for a result: its tables (`tables` renders them), or the whole answer as JSON or YAML. */
export function render(format: OutputFormat, value: unknown, tables: () => string): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(value, null, 2)}\n`;
    case 'yaml':
      return stringify(value);
    case 'table':
      return tables();
  }
}

/** A cell for a value that may be absent. */
export function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(String).join(',');
  return String(value);
}
