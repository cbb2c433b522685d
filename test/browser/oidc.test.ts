/**
 * OpenID Connect sign-in to the web console in a real browser (docs/console.md#signing-in-with-openid-connect):
 * Debian's chromium, headless, against the control plane as `npm start` runs it and a real OpenID
 * Provider (oidc-provider). The tests run in order, each going on from the last.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planeHttp } from '../support/control-plane-process.ts';
import { browserSuiteDidNotRun, chromiumAvailability, launchConsoleBrowser, type ConsoleBrowser } from './chromium.ts';
import { startOidcWorld, type OidcWorld } from './oidc-world.ts';

const availability = chromiumAvailability();
const TOKEN_KEY = 'vendor-console.token';

const storedToken = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY);

if (!availability.available) browserSuiteDidNotRun("the console's OIDC browser suite", availability.reason);
else {
  describe('OIDC sign-in to the web console in chromium', { timeout: 90_000 }, () => {
    let world: OidcWorld;
    let browser: ConsoleBrowser;
    beforeAll(async () => {
      world = await startOidcWorld();
      browser = await launchConsoleBrowser(world.plane.url);
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await world?.close();
    });
    const page = (): Page => browser.page;
    const url = (): string => world.plane.url;

    /** From the console's sign-in page through the provider's login and consent, back to the accounts. */
    async function signInAs(p: Page, login: string, shots?: ConsoleBrowser): Promise<void> {
      await p.getByRole('button', { name: `Sign in with ${new URL(world.op.url).host}` }).click();
      await p.waitForURL((u) => u.href.startsWith(world.op.url));
      await p.getByLabel('User').fill(login);
      await shots?.screenshot('oidc-provider-login');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('button', { name: 'Allow' }).click();
      await p.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    }

    it('offers sign-in with the issuer, and signs a user in through the provider’s login with a token kept in the tab only', async () => {
      await page().goto(`${url()}/ui/`);
      await page().getByRole('button', { name: `Sign in with ${new URL(world.op.url).host}` }).waitFor();
      await browser.screenshot('oidc-sign-in');
      await signInAs(page(), 'reader', browser);
      await page().locator('main').getByRole('link', { name: 'team-a' }).waitFor();
      await browser.screenshot('oidc-signed-in-reader');

      const address = new URL(page().url());
      expect(address.pathname).toBe('/ui/');
      expect(address.search).toBe('');
      const token = await storedToken(page());
      expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(await page().evaluate(() => localStorage.length)).toBe(0);
      expect(await page().evaluate('document.cookie')).toBe('');
      // The code went once to the provider's token endpoint, from the console's origin (CORS).
      expect(world.op.requests).toContain('POST /token');
      expect(browser.foreignRequests.every((r) => r.startsWith(`${world.op.url}/`)), browser.foreignRequests.join('\n')).toBe(true);
    });

    it('shows a READ-only caller its account and no write or manager controls, and the API refuses its write (403)', async () => {
      await page().locator('main').getByRole('link', { name: 'team-a' }).waitFor();
      expect(await page().locator('main').getByRole('link', { name: 'team-b' }).count()).toBe(0);
      expect(await page().getByRole('button', { name: /^(Register|Remove|Activate)\b/ }).count()).toBe(0);
      expect(await page().getByRole('heading', { name: 'Register an account' }).count()).toBe(0);

      await page().locator('main').getByRole('link', { name: 'team-a' }).click();
      await page().getByRole('heading', { level: 1, name: 'team-a' }).waitFor();
      await page().getByRole('heading', { name: 'Settings as served' }).waitFor();
      expect(await page().getByRole('heading', { name: 'Run an operation' }).count()).toBe(0);

      const token = (await storedToken(page())) as string;
      expect((await planeHttp(`${url()}/vendor/accounts/team-a`, 'GET', undefined, token)).status).toBe(200);
      expect((await planeHttp(`${url()}/vendor/accounts/team-a`, 'DELETE', undefined, token)).status).toBe(403);
      expect((await planeHttp(`${url()}/vendor/accounts`, 'POST', [{ name: 'team-b' }], token)).status).toBe(403);
    });

    it('signs out: the token leaves the tab and the provider ends its session, then sends the browser back to sign-in', async () => {
      await page().getByRole('button', { name: 'Sign out' }).click();
      await page().waitForURL((u) => u.href.startsWith(world.op.url));
      await page().getByRole('button', { name: 'Yes, sign me out' }).click();
      await page().waitForURL((u) => u.href.startsWith(`${url()}/ui/`));
      await page().getByRole('heading', { level: 1, name: 'Sign in to the console' }).waitFor();
      expect(await storedToken(page())).toBeNull();
      expect(await page().evaluate(() => sessionStorage.length)).toBe(0);
      // The provider's session is over: signing in asks for the user again.
      await page().getByRole('button', { name: `Sign in with ${new URL(world.op.url).host}` }).click();
      await page().getByLabel('User').waitFor();
      await page().goto(`${url()}/ui/`);
    });

    it('sends the user back to sign-in when the token expires', async () => {
      await signInAs(page(), 'reader');
      // The page's clock, not the test's: the token (300 s) runs out without anyone waiting.
      await page().clock.install();
      await page().reload();
      await page().getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
      await page().clock.fastForward('05:01');
      await page().getByRole('heading', { level: 1, name: 'Sign in to the console' }).waitFor();
      expect(await page().getByRole('status').filter({ hasText: 'Your sign-in has expired' }).count()).toBe(1);
      expect(await storedToken(page())).toBeNull();
    });

    it('shows a manager the register and remove controls', async () => {
      const manager = await launchConsoleBrowser(url());
      try {
        await manager.page.goto(`${url()}/ui/`);
        await signInAs(manager.page, 'manager');
        await manager.page.getByRole('button', { name: 'Remove team-a' }).waitFor();
        await manager.page.getByRole('button', { name: 'Register team-b' }).waitFor();
        await manager.page.getByRole('heading', { name: 'Register an account' }).waitFor();
        await manager.screenshot('oidc-signed-in-manager');
        await manager.page.locator('main').getByRole('link', { name: 'team-a' }).click();
        await manager.page.getByRole('heading', { name: 'Run an operation' }).waitFor();
      } finally {
        await manager.close();
      }
    });

    it('threw no error in the pages', () => {
      expect(browser.pageErrors).toEqual([]);
    });
  });
}
