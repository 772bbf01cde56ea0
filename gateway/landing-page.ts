import { createHash } from 'node:crypto';
import type { AccessMode } from '../machines/access/types.js';
import { railReady, type RailHealth } from '../rails/rail.js';
import { escapeHtml } from './html.js';

export interface LandingView {
  /** This server's address as the client reached it. */
  base: string;
  rails: readonly (readonly [name: string, health: RailHealth])[];
  accessMode: AccessMode;
}

const ACCESS_NOTES: Record<AccessMode, string> = {
  open: 'any party may create and fund pacts here.',
  invite: 'only allowed parties may write here; ask with `pact request-access` (a six-digit code comes by email).',
};


/** `template` with each `{{name}}` replaced by `values[name]`, HTML-escaped; a name without a value is a bug here. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`the landing page has no value for {{${name}}}`);
    return escapeHtml(values[name]!);
  });
}

/**
 * A Content-Security-Policy that lets the page apply its own inline `<style>` blocks (allowed by their
 * SHA-256, so the template must not interpolate inside them) and load nothing else: no script, image, font,
 * frame or form target.
 */
function contentSecurityPolicy(template: string): string {
  const styleHashes = [...template.matchAll(/<style>([\s\S]*?)<\/style>/g)].map(
    ([, css]) => `'sha256-${createHash('sha256').update(css!).digest('base64')}'`,
  );
  return [`default-src 'none'`, `style-src ${styleHashes.join(' ') || `'none'`}`, `base-uri 'none'`, `form-action 'none'`, `frame-ancestors 'none'`].join('; ');
}

/** `GET /`: the landing page made from `template` (gateway/discovery/landing.html), and the policy it is sent with. */
export function landingPage(template: string): { csp: string; render(view: LandingView): string } {
  return {
    csp: contentSecurityPolicy(template),
    render: ({ base, rails, accessMode }) =>
      fill(template, {
        base,
        rails: rails.map(([name, health]) => `${name} (${railReady(health) ? 'ready' : 'not ready'})`).join(', ') || 'none',
        accessMode,
        accessNote: ACCESS_NOTES[accessMode],
      }),
  };
}
