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
  const hostPort = parts[0] ?? '';
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(hostPort);
  const plain = /^([^:]*)(?::(\d+))?$/.exec(hostPort);
  const match = bracketed ?? plain;
  const fallback = scheme === 'http' ? 80 : 443;
  if (!match) return { host: hostPort, port: fallback };
  return { host: match[1] ?? '', port: match[2] ? Number(match[2]) : fallback };
}
