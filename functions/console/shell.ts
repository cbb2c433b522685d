import type { ConsoleManifest } from './asset-store.ts';

export const ASSETS_PATH = '/ui/assets/';

/**
 * The page every console path answers (the client's router takes it from there). It holds no data
 * and no inline script or style, so the console's CSP can forbid both.
 */
export function consoleShell(manifest: ConsoleManifest): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<title>vendor-agent console</title>',
    `<link rel="icon" href="${ASSETS_PATH}${manifest.icon}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${ASSETS_PATH}${manifest.style}">`,
    `<script type="module" src="${ASSETS_PATH}${manifest.script}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"><p class="boot">Loading the console…</p></div>',
    '<noscript><p>The vendor-agent console needs JavaScript. The API itself is described at <a href="/openapi.json">/openapi.json</a>.</p></noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
