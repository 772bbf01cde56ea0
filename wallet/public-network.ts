import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** Loopback, private, shared, link-local, unique-local, multicast, reserved and IPv4-embedding ranges: never called for a registry entry. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
// ::/96 holds the unspecified, loopback and IPv4-compatible addresses; 2002::/16 (6to4), 2001::/32 (Teredo) and the
// NAT64 prefixes embed an IPv4 address that could be anyone's.
for (const [network, prefix] of [['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is a public unicast one (an IPv4-mapped IPv6 address is read as its IPv4 address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** dns.lookup failing for a name that resolves to any address `allowed` refuses. */
const lookupWhere =
  (allowed: (address: string) => boolean): Lookup =>
  (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const refused = addresses.find(({ address }) => !allowed(address));
      if (refused || addresses.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address`), { code: 'ENOTPUBLIC' }), '');
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

const anyAddress = (address: string) => isIP(address) !== 0;

/**
 * fetch for addresses a registry or a provider names: http(s) only and, unless `allowPrivate` (tests on loopback),
 * public addresses only, checked as the socket connects, so a name cannot be pointed elsewhere between a check and
 * the call (an IP literal is checked here, as no lookup runs for it). Made on node:http with its `lookup` hook:
 * fetch has none without a dispatcher of its own, and loading undici for one would replace the process's global one.
 */
export function outboundFetch(allowPrivate: boolean) {
  const allowed = allowPrivate ? anyAddress : isPublicAddress;
  const lookupAllowed = lookupWhere(allowed);
  return (url: string, init: RequestInit): Promise<Response> => {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new Error(`${target.protocol} is not http(s)`));
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && !allowed(literal)) return Promise.reject(new Error(`${literal} is not a public address`));
    return requestVia(lookupAllowed, target, init);
  };
}

/** One request on node:http(s) resolving names with `lookupAllowed`, as a fetch Response (redirects are answers, not followed). */
function requestVia(lookupAllowed: Lookup, target: URL, init: RequestInit): Promise<Response> {
  const method = init.method ?? 'GET';
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      target,
      { method, headers: init.headers as Record<string, string> | undefined, lookup: lookupAllowed as never, signal: init.signal ?? undefined },
      (answer) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(answer.headers)) for (const one of [value ?? []].flat()) headers.append(name, one);
        const status = answer.statusCode ?? 502;
        const bodiless = method === 'HEAD' || status === 204 || status === 304;
        if (bodiless) answer.resume();
        resolve(new Response(bodiless ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>), { status, headers }));
      },
    );
    request.on('error', reject);
    request.end(typeof init.body === 'string' ? init.body : undefined);
  });
}

/** An answer's body as text, read no further than `maxBytes` (more: an error, the rest never read). */
export async function readAtMost(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.body.cancel().catch(() => undefined);
      throw new Error(`the answer is over ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
