import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Flags of @sparticuz/chromium's defaults (meant for serverless scraping) that would switch off protections the
 * pages rely on in a user's browser: same-origin and mixed-content checks. */
const WEAKENING_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);

/**
 * A real headless Chromium from the @sparticuz/chromium npm package (the browser ships inside it, so `npm ci`
 * installs everything the tests need). Launch once per test file and close it in afterAll.
 */
export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    args: chromium.args.filter((arg) => !WEAKENING_FLAGS.has(arg)),
    executablePath: await chromium.executablePath(),
    headless: true,
  });
}

export interface WatchedPage {
  page: Page;
  /** Every request the page made (URLs), in order. */
  requests: string[];
  /** Console messages, including the browser's own (a Content Security Policy refusal is one). */
  console: string[];
}

/** A new tab that records the requests it makes and what reaches its console; JavaScript off unless asked. */
export async function openTab(browser: Browser, options: { javascript?: boolean } = {}): Promise<WatchedPage> {
  const page = await browser.newPage();
  await page.setJavaScriptEnabled(options.javascript ?? false);
  const requests: string[] = [];
  const messages: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => messages.push(message.text()));
  return { page, requests, console: messages };
}
