import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { landingPage } from '../../gateway/landing-page.js';

// The landing page's renderer: every value is HTML-escaped, a placeholder without a value is refused, and
// the Content-Security-Policy allows the template's own <style> by its hash and nothing else.

const TEMPLATE = '<style>p{color:red}</style><p>{{base}} {{rails}} {{accessMode}}: {{accessNote}}</p>';
const ready = { live: true, solvency: { ok: true }, payoutsReady: true };

test('every interpolated value is HTML-escaped', () => {
  const html = landingPage(TEMPLATE).render({ base: 'http://a.test/"><script>&', rails: [['<b>', ready], ['x402', { live: false, solvency: { ok: true }, payoutsReady: false }]], accessMode: 'open' });
  assert.is(html, '<style>p{color:red}</style><p>http://a.test/&quot;&gt;&lt;script&gt;&amp; &lt;b&gt; (ready), x402 (not ready) open: any party may create and fund pacts here.</p>');
});

test('a placeholder the renderer has no value for is an error, not a blank', () => {
  assert.throws(() => landingPage('<p>{{nothing}}</p>').render({ base: 'http://a.test', rails: [], accessMode: 'invite' }), /nothing/);
});

test('the policy allows the template\'s inline style by its hash, and no script or other source', () => {
  const hash = createHash('sha256').update('p{color:red}').digest('base64');
  assert.is(landingPage(TEMPLATE).csp, `default-src 'none'; style-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
});

test.run();
