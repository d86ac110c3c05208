import { createHash } from 'node:crypto';

/** Text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The only style of the pages, inline and allowed by its hash: no external asset, no 'unsafe-inline'.
const CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #99a;border-radius:4px}
button{margin-top:1.5rem;padding:.6rem 1rem;font:inherit;color:#fff;background:#2457c5;border:0;border-radius:4px}
.error{padding:.75rem;background:#fdecec;border:1px solid #d33;border-radius:4px}
.done{padding:.75rem;background:#eaf7ec;border:1px solid #2a2;border-radius:4px}
code{background:#eef;padding:0 .25rem}`;

const STYLE_HASH = createHash('sha256').update(CSS).digest('base64');

/** Response headers of every page: nothing loads but the page itself and its hashed style; the form posts only
 * to this server; no framing, no referrer (the URL carries the token), no caching of a page that holds one. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

/** A whole page around `body` (already HTML). */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · svc</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function errorBox(message: string): string {
  return `<p class="error" role="alert">${escapeHtml(message)}</p>`;
}

export function doneBox(message: string): string {
  return `<p class="done" role="status">${escapeHtml(message)}</p>`;
}

export interface FormField {
  name: string;
  label: string;
  type: 'text' | 'password';
  autocomplete: string;
  required: boolean;
  /** Echoed back after an error; never for passwords. */
  value?: string;
}

/** A form that posts to `action` (relative, so it works under a path prefix) with the token hidden in it: the
 * token then leaves the address bar after the first submit and never travels in a query string again. */
export function form(action: string, token: string, fields: readonly FormField[], submit: string): string {
  const inputs = fields.map((f) => {
    const value = f.type === 'text' && f.value ? ` value="${escapeHtml(f.value)}"` : '';
    const required = f.required ? ' required' : '';
    return `<label for="${f.name}">${escapeHtml(f.label)}</label>
<input id="${f.name}" name="${f.name}" type="${f.type}" autocomplete="${f.autocomplete}"${required}${value}>`;
  });
  return `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
${inputs.join('\n')}
<button type="submit">${escapeHtml(submit)}</button>
</form>`;
}
