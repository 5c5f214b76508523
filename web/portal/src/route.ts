import { useEffect, useState } from 'preact/hooks';

/** A hash route: `#/workflows/wf_1?x=y` → { path: ['workflows', 'wf_1'], params: { x: 'y' } }. */
export interface Route {
  path: string[];
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const at = raw.indexOf('?');
  const pathPart = at >= 0 ? raw.slice(0, at) : raw;
  const path = pathPart
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
  return { path, params: new URLSearchParams(at >= 0 ? raw.slice(at + 1) : '') };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export const href = (...segments: string[]): string =>
  `#/${segments.map((s) => encodeURIComponent(s)).join('/')}`;

export function navigate(to: string): void {
  if (location.hash !== to) location.hash = to;
}
