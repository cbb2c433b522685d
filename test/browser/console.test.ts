/**
 * The web console in a real browser (docs/console.md): Debian's chromium, headless, against the
 * control plane as `npm start` runs it, its local agent and the test Kubernetes API server. One
 * browser and one world for the whole file; the tests run in order, each going on from the last.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, test, vi } from 'vitest';
import { PLANE_TOKEN } from '../support/control-plane-process.ts';
import { browserSuiteDidNotRun, chromiumAvailability, launchConsoleBrowser, type ConsoleBrowser } from './chromium.ts';
import { startConsoleWorld, type ConsoleWorld } from './world.ts';

const availability = chromiumAvailability();
const TEAMS = 300;
const REGISTERED = 120;
const SETTLE = { timeout: 30_000, interval: 200 };

/** What has focus: tag, name or id, and text, for keyboard checks. */
const FOCUSED = `(() => { const a = document.activeElement; if (!a) return ''; return [a.tagName.toLowerCase(), a.getAttribute('name') ?? a.id ?? '', (a.textContent ?? '').trim().slice(0, 60), a.matches(':focus-visible') ? 'visible' : ''].join('|'); })()`;

async function focused(page: Page): Promise<string> {
  return (await page.evaluate(FOCUSED)) as string;
}

/** Presses Tab until the focused element's description matches, as a keyboard user would. */
async function tabTo(page: Page, wanted: RegExp, max = 80, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<string> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const now = await focused(page);
    if (wanted.test(now)) return now;
  }
  throw new Error(`${max} presses of Tab never reached ${wanted}; last focus: ${await focused(page)}`);
}

async function heading(page: Page): Promise<string> {
  return (await page.locator('main h1').first().textContent()) ?? '';
}

if (!availability.available) {
  browserSuiteDidNotRun("the console's browser suite", availability.reason);
} else {
  describe('the web console in chromium', { timeout: 90_000 }, () => {
    let world: ConsoleWorld;
    let browser: ConsoleBrowser;
    let page: Page;
    let url: string;
    beforeAll(async () => {
      world = await startConsoleWorld(TEAMS, REGISTERED);
      url = world.plane.url;
      browser = await launchConsoleBrowser(url);
      page = browser.page;
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await world?.close();
    });

    it('is where npm start says, and sends a browser from / to sign-in', async () => {
      await vi.waitFor(() => expect(world.plane.output()).toContain(`console: open ${url}/ in a browser`), SETTLE);
      expect(world.plane.output()).not.toContain(PLANE_TOKEN);
      await page.goto(`${url}/`);
      expect(new URL(page.url()).pathname).toBe('/ui/');
      expect(await heading(page)).toBe('Sign in to the console');
      expect(await focused(page)).toMatch(/^input\|token\|/);
    });

    it('shows the API’s refusal of a wrong token, then signs in with the admin token kept out of the URL and localStorage', async () => {
      await page.getByLabel('Bearer token').fill('not-the-admin-token-0123456789abcdef');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('a valid bearer token is required');
      await browser.screenshot('sign-in');

      await page.getByLabel('Bearer token').fill(PLANE_TOKEN);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
      expect(page.url()).not.toContain(PLANE_TOKEN);
      expect(await page.evaluate('JSON.stringify(Object.entries(localStorage))')).toBe('[]');
      expect(await page.evaluate('document.cookie')).toBe('');
      expect(await page.evaluate('JSON.stringify(Object.values(sessionStorage))')).toBe(JSON.stringify([PLANE_TOKEN]));
      expect(await page.locator('.who').textContent()).toContain('admin-token');
    });

    it('lists a few hundred accounts with their summary, filters them and pages through them', async () => {
      const status = page.locator('#page-status');
      await vi.waitFor(async () => expect(await status.textContent()).toBe(`Page 1 of 7 · ${TEAMS + 1} accounts`), SETTLE);
      expect(await page.locator('table.accounts tbody tr').count()).toBe(50);
      expect(await page.locator('.summary').textContent()).toContain(`${REGISTERED}inactive`);
      await browser.screenshot('accounts', { fullPage: false });

      await page.getByRole('checkbox', { name: 'INACTIVE' }).check();
      await page.getByRole('search', { name: 'Filter accounts' }).getByLabel('Zone').fill('zone-b_ns');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await vi.waitFor(async () => expect(await status.textContent()).toBe(`Page 1 of 2 · ${REGISTERED / 2} accounts`), SETTLE);
      expect(new URL(page.url()).search).toBe('?state=INACTIVE&zoneId=zone-b_ns');
      const zones = await page.locator('table.accounts tbody tr td:nth-child(4)').allTextContents();
      expect(new Set(zones)).toEqual(new Set(['zone-b_ns']));

      await page.getByRole('button', { name: 'Next →' }).click();
      await vi.waitFor(async () => expect(await status.textContent()).toBe(`Page 2 of 2 · ${REGISTERED / 2} accounts`), SETTLE);
      expect(await page.locator('table.accounts tbody tr').count()).toBe(10);

      await page.goto(`${url}/ui/?namePrefix=team-01`);
      await vi.waitFor(async () => expect(await status.textContent()).toBe('Page 1 of 1 · 10 accounts'), SETTLE);
      expect(await page.locator('table.accounts tbody th').allTextContents()).toEqual(Array.from({ length: 10 }, (_, i) => `team-01${i}`));
    });

    it('shows a bad filter as the API states it, beside its field', async () => {
      await page.goto(`${url}/ui/?zoneId=-bad-`);
      const error = page.getByRole('search', { name: 'Filter accounts' }).locator('[data-error-for="zoneId"]');
      await error.waitFor();
      expect(await error.textContent()).not.toBe('');
      expect(await page.getByRole('alert').textContent()).toContain('(400)');
      expect(await page.getByRole('search', { name: 'Filter accounts' }).getByLabel('Zone').getAttribute('aria-invalid')).toBe('true');
    });

    it('registers and activates an account from the form, held by the local agent until ACTIVE shows', async () => {
      await page.goto(`${url}/ui/?namePrefix=local`);
      await page.getByRole('heading', { level: 2, name: 'Register an account' }).waitFor();
      const form = page.locator('form.register');
      await form.getByLabel('Account name').fill('local');
      await form.getByLabel('Zone').fill('vendor-agent_local');
      await form.getByLabel('Activate it at once').check();
      await form.getByRole('button', { name: 'Register' }).click();
      await vi.waitFor(async () => expect(await form.locator('.success').textContent()).toBe('local is ACTIVE'), SETTLE);
      // Live refresh brings the agent's confirmation in without a reload.
      const row = page.locator('table.accounts tbody tr').filter({ hasText: 'local' });
      await vi.waitFor(async () => expect(await row.textContent()).toMatch(/ACTIVE.*local-agent.*caching/), SETTLE);
      await browser.screenshot('accounts-active', { fullPage: false });
    });

    it('shows a 409 from the API as it states it', async () => {
      await page.goto(`${url}/ui/`);
      const form = page.locator('form.register');
      await form.getByLabel('Account name').fill('team-250');
      await form.getByLabel('Zone').fill('nowhere_ns');
      await form.getByLabel('Activate it at once').check();
      await form.getByRole('button', { name: 'Register' }).click();
      const alert = form.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent()) ?? '';
      expect(text).toContain('(409)');
      expect(text).toContain('no active agent session in zone "nowhere_ns"');
      await browser.screenshot('conflict', { of: form });
    });

    it('deploys pasted YAML from the form to SUCCEEDED, with an Idempotency-Key the page made', async () => {
      await page.goto(`${url}/ui/accounts/local`);
      const form = page.locator('form.operations-form');
      await form.waitFor();
      const key = (await form.locator('#idempotency-key').textContent()) ?? '';
      expect(key).toMatch(/^console-[0-9a-f-]{36}$/);
      await form.getByLabel('Action').selectOption('deploy');
      await form.getByLabel('Manifests (YAML)').fill('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: console-web\ndata:\n  greeting: hello\n');
      await form.getByLabel('Namespace').fill('default');
      await form.getByRole('button', { name: 'Run' }).click();
      const result = form.locator('.operation');
      await vi.waitFor(async () => expect(await result.locator('.badge').first().textContent()).toBe('SUCCEEDED'), SETTLE);
      expect(await result.locator('table.outcomes tbody').textContent()).toMatch(/ConfigMap.*default.*console-web.*created/);
      expect(await result.textContent()).toContain(key);
      expect(await form.locator('#idempotency-key').textContent()).not.toBe(key);
      expect(world.kube.requests.log().some((r) => r.verb === 'patch' && r.name === 'console-web')).toBe(true);
      await browser.screenshot('deploy', { of: form });
    });

    it('browses the cached resources by kind, namespace and name, showing the object', async () => {
      await vi.waitFor(async () => {
        await page.goto(`${url}/ui/accounts/local`);
        await page.locator('section[aria-labelledby="resources-title"] select[name="kind"]').selectOption('ConfigMap', { timeout: 2_000 });
      }, SETTLE);
      const browserSection = page.locator('section[aria-labelledby="resources-title"]');
      await browserSection.getByLabel('Namespace').fill('default');
      await vi.waitFor(async () => {
        await browserSection.getByRole('button', { name: 'Show resources' }).click();
        await browserSection.getByRole('button', { name: 'console-web' }).click({ timeout: 2_000 });
      }, SETTLE);
      const object = browserSection.locator('pre.object');
      // The cache keeps the compact form: a ConfigMap's keys, not its values.
      expect(await object.textContent()).toContain('"name": "console-web"');
      expect(await object.textContent()).toMatch(/"dataKeys": \[\s*"greeting"\s*\]/);
      expect(await page.locator('section[aria-labelledby="cache-title"] table').textContent()).toContain('ConfigMap');
      // The local account watches every namespace: one watch per kind, open.
      const configMaps = page.locator('section[aria-labelledby="cache-title"] table tbody tr').filter({ hasText: 'ConfigMap' });
      expect(await configMaps.locator('td').nth(1).textContent()).toBe('watching');
      expect(await page.locator('section[aria-labelledby="operations-title"] table').textContent()).toContain('SUCCEEDED');
      await browser.screenshot('account');
    });

    it('shows one operation with its result per manifest', async () => {
      await page.locator('section[aria-labelledby="operations-title"] table a').first().click();
      await page.getByRole('heading', { level: 1, name: 'Operation' }).waitFor();
      await vi.waitFor(async () => expect(await page.locator('.operation .badge').first().textContent()).toBe('SUCCEEDED'), SETTLE);
      expect(new URL(page.url()).pathname).toMatch(/^\/ui\/operations\/[0-9a-f]{32}$/);
      await browser.screenshot('operation');
    });

    it('lists the agents and their zones', async () => {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Agents and zones' }).click();
      await page.getByRole('heading', { level: 1, name: 'Agents and zones' }).waitFor();
      await vi.waitFor(async () => expect(await page.locator('main').textContent()).toContain('local-agent'), SETTLE);
      expect(await page.locator('main').textContent()).toContain('vendor-agent_local');
      await browser.screenshot('agents');
    });

    it('works from the keyboard alone: sign-out, sign-in, filter, open an account, focus on each new page', async () => {
      await page.goto(`${url}/ui/`);
      await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
      await vi.waitFor(async () => expect(await focused(page)).toMatch(/^h1\|/), SETTLE);
      // The header comes before the heading that has focus: back up to it.
      await tabTo(page, /^button\|sign-out\|Sign out/, 10, 'Shift+Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Sign in to the console' }).waitFor();
      expect(await page.evaluate('JSON.stringify(Object.values(sessionStorage))')).toBe('[]');

      expect(await focused(page)).toMatch(/^input\|token\|/);
      await page.keyboard.type(PLANE_TOKEN);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
      await vi.waitFor(async () => expect(await focused(page)).toMatch(/^h1\|/), SETTLE);

      await tabTo(page, /^input\|namePrefix\|/);
      await page.keyboard.type('local');
      await page.keyboard.press('Enter');
      await vi.waitFor(async () => expect(await page.locator('#page-status').textContent()).toBe('Page 1 of 1 · 1 accounts'), SETTLE);
      const link = await tabTo(page, /^a\|\|local\|/);
      expect(link).toMatch(/\|visible$/);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'local' }).waitFor();
      await vi.waitFor(async () => expect(await focused(page)).toMatch(/^h1\|\|local\|/), SETTLE);

      await tabTo(page, /^a\|\|Agents and zones\|/, 10, 'Shift+Tab');
      await page.keyboard.press('Enter');
      await vi.waitFor(async () => expect(await focused(page)).toMatch(/^h1\|\|Agents and zones\|/), SETTLE);
      expect(await page.locator('[role="status"][aria-live="polite"]').count()).toBe(1);
      expect(await page.locator('header').count()).toBe(1);
      expect(await page.locator('nav[aria-label="Console"]').count()).toBe(1);
    });

    it('says so when the API cannot be reached, rather than showing a blank page', async () => {
      await page.route('**/vendor/agents?**', (route) => route.abort('connectionrefused'));
      try {
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Agents and zones' }).click();
        const alert = page.getByRole('alert');
        await alert.waitFor();
        expect(await alert.textContent()).toContain('Network failure');
        expect(await heading(page)).toBe('Agents and zones');
      } finally {
        await page.unroute('**/vendor/agents?**');
      }
    });

    it('returns to sign-in when the API answers 401', async () => {
      await page.evaluate(`sessionStorage.setItem('vendor-console.token', 'a-token-the-api-refuses-0123456789abcdef')`);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Accounts' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to the console' }).waitFor();
      expect(await page.locator('main').textContent()).toContain('sign in again');
      expect(await page.evaluate('JSON.stringify(Object.values(sessionStorage))')).toBe('[]');
    });

    it('refreshes the accounts every 5 s while the tab is visible, and not while it is hidden', async () => {
      // A tab of its own on a clock the test moves, so no wait depends on the machine's speed.
      const tab = await browser.context.newPage();
      try {
        await tab.clock.install();
        await tab.goto(`${url}/ui/`);
        await tab.getByLabel('Bearer token').fill(PLANE_TOKEN);
        await tab.keyboard.press('Enter');
        await tab.locator('#page-status').waitFor();
        const reads: string[] = [];
        let sentinels = 0;
        tab.on('request', (request) => {
          const path = new URL(request.url()).pathname;
          if (path === '/vendor/accounts') reads.push(request.url());
          if (path === '/healthz') sentinels++;
        });
        const settled = async (count: number) => vi.waitFor(() => expect(reads.length).toBe(count), SETTLE);
        // A request of the page's own after the clock has run: once the suite has seen it, it has seen every earlier one.
        const seenAll = async () => {
          const before = sentinels;
          await tab.evaluate(`fetch('/healthz').then((r) => r.status)`);
          await vi.waitFor(() => expect(sentinels).toBe(before + 1), SETTLE);
        };

        const stamp = tab.locator('#refreshed-at');
        /** Waits until the page has shown a refresh after `before`: then the next one is scheduled. */
        const refreshedSince = async (before: string | null) => vi.waitFor(async () => expect(await stamp.textContent()).not.toBe(before), SETTLE);

        let before = await stamp.textContent();
        await tab.clock.runFor(5_100);
        await settled(1);
        await refreshedSince(before);
        await tab.evaluate(`Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' }); document.dispatchEvent(new Event('visibilitychange'))`);
        await tab.clock.runFor(60_000);
        await seenAll();
        expect(reads).toHaveLength(1);
        // Shown again: at once, then every 5 s.
        await tab.evaluate(`Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' }); document.dispatchEvent(new Event('visibilitychange'))`);
        await settled(2);
        before = await stamp.textContent();
        await tab.clock.runFor(5_100);
        await settled(3);
        await refreshedSince(before);
        // Paused by the operator: no more reads however long.
        await tab.getByLabel('Live refresh').uncheck();
        await tab.clock.runFor(60_000);
        await seenAll();
        expect(reads).toHaveLength(3);
      } finally {
        await tab.close();
      }
    });

    it('made no request to any other origin, and threw no error', () => {
      expect(browser.foreignRequests).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
    });
  });
}
