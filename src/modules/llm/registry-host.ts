/**
 * The registry host an Ollama model name pulls from, as Ollama reads a name
 * (`[scheme://][host/][namespace/]model[:tag]`: three parts or more name the host first), with its
 * port (the scheme's when none is written), or null for the default registry (`library/llama3`).
 */
export function registryHostOf(name: string): { host: string; port: number } | null {
  let rest = name.trim();
  let scheme = 'https';
  const cut = rest.indexOf('://');
  if (cut >= 0) {
    scheme = rest.slice(0, cut).toLowerCase();
    rest = rest.slice(cut + 3);
  }
  const parts = rest.split('/');
  if (parts.length < 3) return null;
  const hostPort = (parts[0] ?? '').toLowerCase();
  const fallback = scheme === 'http' ? 80 : 443;
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(hostPort);
  if (bracketed) return { host: bracketed[1] ?? '', port: bracketed[2] ? Number(bracketed[2]) : fallback };
  // As Go splits host and port: at the last colon (an unbracketed IPv6 address loses its last group).
  const colon = hostPort.lastIndexOf(':');
  if (colon >= 0 && /^\d+$/.test(hostPort.slice(colon + 1)))
    return { host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1)) };
  return { host: hostPort, port: fallback };
}

/**
 * Whether a registry is one the operator lets pulls name (OLLAMA_PULL_REGISTRIES: `host` for any
 * port, `host:port` for one). An allow-list, not an address check: Ollama follows a registry's
 * redirects, so a public host could send it anywhere.
 */
export function registryAllowed(target: { host: string; port: number }, allowed: readonly string[]): boolean {
  const host = target.host.toLowerCase();
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e !== '' && (e === host || e === `${host}:${target.port}` || e === `[${host}]:${target.port}`);
  });
}
