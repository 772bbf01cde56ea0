import { renderMermaidSVG } from 'beautiful-mermaid';

/**
 * Mermaid text drawn as SVG by beautiful-mermaid (no DOM, no browser; the same text gives the same bytes).
 * Each state is a `<g class="node" data-id="…">` group named by the state's `diagramId`.
 */
export function mermaidToSvg(mermaid: string): string {
  return offlineFonts(renderMermaidSVG(mermaid, { font: 'Inter' })).trimEnd() + '\n';
}

/**
 * The renderer's stylesheet imports Inter from a web font service; the diagrams are read offline (and served
 * by pages that make no outside requests), so the import goes, and Inter falls back to installed fonts about
 * as wide as the renderer measures text (Helvetica, Arial and its metric twin Liberation Sans, not DejaVu).
 */
const offlineFonts = (svg: string): string =>
  svg
    .replace(/^\s*@import url\([^)]*\);\n/gm, '')
    .replace("font-family: 'Inter', system-ui, sans-serif;", `font-family: ${FONTS};`);

const FONTS = "'Inter', 'Helvetica Neue', Helvetica, Arial, 'Liberation Sans', system-ui, sans-serif";
