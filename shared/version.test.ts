import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from './version.ts';

describe('VERSION', () => {
  it('is the version of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  it('is a semantic version, as CHANGELOG.md names it', () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8')).toContain(`## [${VERSION}]`);
  });

  it("is the chart's version and appVersion", () => {
    const chart = readFileSync(new URL('../deploy/helm/vendor-agent/Chart.yaml', import.meta.url), 'utf8');
    expect(chart).toMatch(new RegExp(`^version: ${VERSION.replaceAll('.', '\\.')}$`, 'm'));
    expect(chart).toMatch(new RegExp(`^appVersion: "${VERSION.replaceAll('.', '\\.')}"$`, 'm'));
  });

  it('is the only version the agent configuration speaks of: no "(0.6.7+)" notes in its schema', () => {
    const schema = readFileSync(new URL('../docs/vendor-agent.schema.json', import.meta.url), 'utf8');
    expect(schema.match(/\(\d+\.\d+\.\d+\+\)/g) ?? []).toEqual([]);
  });
});
