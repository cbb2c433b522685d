import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, type BuiltConsole } from '../../scripts/build-console.ts';
import { adminTokenAuth, TEST_ADMIN_TOKEN } from '../../test/support/api.ts';
import { createApp } from '../app.ts';
import { PROBLEM_CONTENT_TYPE } from '../problem.ts';

// Only the console's own paths are asked for: nothing here touches the table.
const table = { client: null as never, tableName: 'unused' };
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

let built: BuiltConsole;
let app: ReturnType<typeof createApp>;
beforeAll(async () => {
  built = await buildConsole(mkdtempSync(join(tmpdir(), 'console-build-')));
  app = createApp({ table, auth: adminTokenAuth(), console: { dir: built.dir } });
}, 60_000);

const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('the console under /ui', () => {
  it('answers the shell on /ui and every deep link, without credentials, under a strict CSP', async () => {
    for (const path of ['/ui', '/ui/', '/ui/accounts/prod', '/ui/agents', '/ui/operations/abc']) {
      const res = await app.request(path, { headers: html });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy'), path).toBe(CSP);
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const page = await res.text();
      expect(page).toContain(`<script type="module" src="/ui/assets/${built.script}"></script>`);
      expect(page).toContain(`<link rel="stylesheet" href="/ui/assets/${built.style}">`);
      // Nothing the CSP forbids: no inline script or style, nothing from elsewhere.
      expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(page).not.toMatch(/<style|\bstyle=|\bon[a-z]+=/i);
      expect(page).not.toMatch(/https?:\/\//);
    }
  });

  it('serves the hashed assets as immutable, and an unknown one as a 404 problem', async () => {
    for (const [name, type] of [
      [built.script, 'text/javascript; charset=utf-8'],
      [built.style, 'text/css; charset=utf-8'],
      [built.icon, 'image/svg+xml'],
    ] as const) {
      const res = await app.request(`/ui/assets/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type'), name).toBe(type);
      expect(res.headers.get('cache-control'), name).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy'), name).toBe(CSP);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(built.dir, 'assets', name))), name).toBe(true);
      expect(name).toMatch(/-[A-Za-z0-9]{8,}\.(js|css|svg)$/);
    }
    const missing = await app.request('/ui/assets/main-NOPE.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });

  it('bundles no eval, and no request to another origin', () => {
    const script = readFileSync(join(built.dir, 'assets', built.script), 'utf8');
    expect(script).not.toMatch(/\beval\(|new Function\(/);
    expect(script).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    expect(script).not.toContain('localStorage');
  });

  it('serves its settings, saying which ways of signing in are on', async () => {
    const res = await app.request('/ui/settings.json');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ signIn: { token: true } });
    const custom = createApp({ table, auth: adminTokenAuth(), console: { dir: built.dir, settings: { signIn: { token: false } }, connectOrigins: ['https://id.example.com'] } });
    expect(await (await custom.request('/ui/settings.json')).json()).toEqual({ signIn: { token: false } });
    expect((await custom.request('/ui/')).headers.get('content-security-policy')).toContain("connect-src 'self' https://id.example.com;");
  });

  it('sends browsers from / to /ui/, and keeps the API answer of / for everyone else', async () => {
    const browser = await app.request('/', { headers: html });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/ui/');
    const anonymous = await app.request('/', { headers: { accept: 'application/json' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const client = await app.request('/', { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(client.status).toBe(404);
    expect(client.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
    expect((await app.request('/', { method: 'POST', headers: html })).status).toBe(401);
  });

  it('answers other methods under /ui with a 404 problem, and never reaches the API from there', async () => {
    const res = await app.request('/ui/accounts', { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, body: '[]' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
  });

  it('says plainly when the console is not built', async () => {
    const unbuilt = createApp({ table, auth: adminTokenAuth(), console: { dir: mkdtempSync(join(tmpdir(), 'console-none-')) } });
    const res = await unbuilt.request('/ui/');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toContain('npm run build:console');
  });
});
