import { readFileSync } from 'node:fs';
import { MACHINES } from '../diagrams/registry.js';
import type { Pact } from '../machines/pact/types.js';
import { escapeHtml } from './html.js';

/** The machines as docs/machines/ holds them (`npm run machines`; a test keeps them equal to the code). */
const CHARTS = new Map(MACHINES.map((entry) => [entry.name, readFileSync(new URL(`../docs/machines/${entry.name}.svg`, import.meta.url), 'utf8')]));

/** The pages run one script of their own and open no connection elsewhere; the charts carry inline styles. */
export const MACHINES_CSP = [
  `default-src 'none'`, `script-src 'self'`, `style-src 'self' 'unsafe-inline'`, `connect-src 'self'`, `img-src 'self' data:`,
  `base-uri 'none'`, `form-action 'none'`, `frame-ancestors 'none'`,
].join('; ');

const page = (title: string, body: string, script = '') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/machines/machines.css">
${script}</head>
<body>
${body}
</body>
</html>
`;

/** `GET /machines`: every machine's statechart. */
export function machinesPage(): string {
  const sections = MACHINES.map(
    (entry) => `<section id="${escapeHtml(entry.name)}">
<h2>${escapeHtml(entry.name)}</h2>
<p>${escapeHtml(entry.summary)} <code>${escapeHtml(entry.source)}</code></p>
<div class="chart">${CHARTS.get(entry.name)}</div>
</section>`,
  );
  const intro = `<h1>State machines</h1>
<p>Drawn from the machine definitions (<code>npm run machines</code>). Edges name the event and, in brackets, the
guard; deadlines are pokes guarded by the deadline that passed. To follow one pact live: <code>/machines/pacts/&lt;pact id&gt;</code>.</p>`;
  return page('Pact state machines', `<main>\n${intro}\n${sections.join('\n')}\n</main>`);
}

/**
 * `GET /machines/pacts/:id`: the pact chart with the pact's state highlighted and its journal beside it, both
 * kept current by /machines/live.js from `GET /machines/pacts/:id/journal` (server-sent events).
 */
export function pactPage(pact: Pact): string {
  const chart = CHARTS.get('pact')!.replace(`<g class="node" data-id="${pact.state}"`, `<g class="node current" data-id="${pact.state}"`);
  const id = escapeHtml(pact.id);
  const body = `<main data-pact="${id}" data-state="${escapeHtml(pact.state)}" data-rows="0">
<h1>Pact <code>${id}</code></h1>
<p>State <span id="state" class="state">${escapeHtml(pact.state)}</span> · <span id="live">connecting…</span> ·
<a href="/pacts/${id}">record (JSON)</a> · <a href="/machines">all machines</a></p>
<noscript><p>The journal and the highlight follow the pact with JavaScript; without it this page shows the state when it was loaded.</p></noscript>
<div class="layout">
<div class="chart">${chart}</div>
<div class="journal">
<h2>Journal</h2>
<table id="journal">
<thead><tr><th>time</th><th>nonce</th><th>signer</th><th>event</th><th>state</th><th>payouts</th></tr></thead>
<tbody></tbody>
</table>
</div>
</div>
</main>`;
  return page(`Pact ${pact.id}`, body, `<script src="/machines/live.js" defer></script>\n`);
}
