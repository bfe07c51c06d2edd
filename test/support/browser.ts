/**
 * A real browser for the console tests: Debian's `chromium` (or `CHATCTX_CHROMIUM`)
 * driven by playwright-core, which downloads no browser of its own. A test file
 * launches one browser and opens a fresh context (its own cookies) per test; `axe`
 * scans a page with axe-core for WCAG 2.0, 2.1 and 2.2 A/AA rules and returns the
 * serious and critical violations.
 *
 * axe-core is evaluated through the DevTools protocol (`page.evaluate`), which the
 * console's Content-Security-Policy does not govern: the policy allows no inline
 * script, so a `<script>` tag with axe's source would be refused, and a context
 * that bypasses the policy would scan a page the owner never sees.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHATCTX_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Chromium; fails (never skips) when it is not installed. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The console's browser tests need Chromium at ${CHROMIUM}. Install it with \`apt-get install chromium\` ` +
        '(CI does, in .ci/run), or set CHATCTX_CHROMIUM to a Chromium or Chrome executable.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A fresh context (no cookies) at a desktop size unless told otherwise. */
export function freshContext(browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  /** CSS selectors of the offending elements. */
  readonly targets: readonly string[];
}

let axeSource: string | undefined;

/** axe-core's serious and critical violations of WCAG 2.0/2.1/2.2 A and AA on the page as it is now. */
export async function axe(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact ?? 'unknown', help: v.help, targets: v.nodes.map((n: any) => String(n.target)) }));
  });
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
