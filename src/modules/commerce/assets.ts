import type { Config } from '../../config.js';

/** Resolves an asset path of the data files to a URL: ASSET_BASE_URL, else `${PUBLIC_URL}/assets/scents`. */
export function assetResolver(
  config: Pick<Config, 'ASSET_BASE_URL' | 'PUBLIC_URL'>,
): (path: string) => string {
  const base = (config.ASSET_BASE_URL || `${config.PUBLIC_URL}/assets/scents`).replace(/\/+$/, '');
  return (path) => `${base}/${path.replace(/^\/+/, '')}`;
}

const escapeXml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The platform's own scent images: a swatch in the family colour with the name, so every image
 * URL resolves without shipping binary files. Set ASSET_BASE_URL to serve photographs from a CDN.
 */
export function swatchSvg(label: string, color: string): string {
  const text = escapeXml(label.length > 28 ? `${label.slice(0, 27)}…` : label);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400">` +
    `<rect width="400" height="400" fill="${color}"/>` +
    `<circle cx="200" cy="170" r="90" fill="#ffffff" fill-opacity="0.25"/>` +
    `<text x="200" y="330" font-family="Georgia, serif" font-size="30" text-anchor="middle" fill="#ffffff">${text}</text>` +
    `</svg>`
  );
}
