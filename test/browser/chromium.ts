/**
 * Debian's chromium driven by playwright-core for the console's browser suite (docs/console.md#tests):
 * headless, with a fresh profile per launch, nothing in the background, and no request leaving this
 * machine unnoticed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect, test } from 'vitest';

export const CHROMIUM_PATH = process.env.VENDOR_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dirname, 'screenshots');

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Whether the suite can run here, and if not why. */
export function chromiumAvailability(): { available: true } | { available: false; reason: string } {
  if (!existsSync(CHROMIUM_PATH)) return { available: false, reason: `no chromium at ${CHROMIUM_PATH} (install Debian's chromium, or set VENDOR_CHROMIUM)` };
  return { available: true };
}

/** The plain report of a browser suite that cannot run here: one test saying so, and why. */
export function browserSuiteDidNotRun(suite: string, reason: string): void {
  test(`${suite} did not run: ${reason}`, () => {
    console.warn(`[${suite}] did not run: ${reason}`);
    expect(reason.trim().length).toBeGreaterThan(0);
  });
}

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** Requests the pages made to any origin but the control plane's. */
  foreignRequests: string[];
  /** Errors the pages threw, and console errors other than failed API answers. */
  pageErrors: string[];
  /** Saves a screenshot of the page (the whole page unless `fullPage: false`), or of one part of it. */
  screenshot(name: string, options?: { fullPage?: boolean; of?: Locator }): Promise<void>;
  close(): Promise<void>;
}

/** One headless chromium on a fresh profile, its first page open on `origin`. */
export async function launchConsoleBrowser(origin: string): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1360, height: 900 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('about:')) foreignRequests.push(url);
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (message) => {
    // A refused request shows as "Failed to load resource": the suite provokes those on purpose.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    foreignRequests,
    pageErrors,
    screenshot: async (name, options = {}) => {
      const path = join(SCREENSHOTS, `${name}.png`);
      if (options.of !== undefined) await options.of.screenshot({ path });
      else await page.screenshot({ path, fullPage: options.fullPage ?? true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
