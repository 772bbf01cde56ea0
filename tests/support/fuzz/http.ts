import { Agent, METHODS, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/** One fuzz request: sent through node:http with keep-alive, or as raw bytes on a fresh socket. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: Buffer | string;
  /** Raw bytes written to a new TCP connection instead of an HTTP request (malformed HTTP itself). */
  raw?: Buffer;
  /** What this request must get besides "< 500": returns a problem, or undefined when the answer is right. */
  expect?: (status: number, body: string) => string | undefined;
  /** Short words for the report. */
  note?: string;
  /** A 2xx answer to this POST is fine (reads, pokes, replayed creates); any other 2xx POST counts as accepted. */
  allow2xx?: boolean;
  /**
   * Send on a connection of its own: the server closes the connection after answering it (431, some 413s,
   * methods its HTTP parser does not know), which would break requests queued behind it on a kept-alive one.
   */
  fresh?: boolean;
}

export interface FuzzResult {
  status?: number;
  body: string;
  /** A transport failure: reset, timeout, closed before an answer. */
  error?: string;
}

const MAX_KEPT_BODY = 64 * 1024;
const TIMEOUT_MS = 30_000;

export class FuzzHttp {
  private readonly agent: Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    sockets = 16,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  close(): void {
    this.agent.destroy();
  }

  /** `fresh` forces a connection of its own (for a retry after a reset, say). */
  send(req: FuzzRequest, fresh = false): Promise<FuzzResult> {
    return req.raw ? this.sendRaw(req.raw) : this.sendHttp(req, fresh || req.fresh === true || !METHODS.includes(req.method));
  }

  private sendHttp(req: FuzzRequest, fresh: boolean): Promise<FuzzResult> {
    return new Promise((resolve) => {
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      const headers: OutgoingHttpHeaders = { ...(req.headers ?? {}) };
      const named = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
      if (body !== undefined && !named('content-length') && !named('transfer-encoding')) headers['content-length'] = body.length;
      let settled = false;
      const done = (result: FuzzResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      let outgoing;
      try {
        outgoing = httpRequest(
          { host: this.host, port: this.port, method: req.method, path: req.path, headers, agent: fresh ? false : this.agent, timeout: TIMEOUT_MS },
          (response) => {
            const chunks: Buffer[] = [];
            let kept = 0;
            response.on('data', (chunk: Buffer) => {
              if (kept < MAX_KEPT_BODY) chunks.push(chunk);
              kept += chunk.length;
            });
            response.on('end', () => done({ status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
            response.on('error', (error) => done({ status: response.statusCode, body: '', error: String(error) }));
          },
        );
      } catch (error) {
        // node refused to send it (a header value it will not put on the wire, say): a generator bug
        done({ body: '', error: `not sent: ${String(error)}` });
        return;
      }
      outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
      outgoing.on('error', (error) => done({ body: '', error: String(error) }));
      outgoing.end(body);
    });
  }

  /** Writes `bytes`, reads until the first response head is complete, the peer closes, or a timeout. */
  private sendRaw(bytes: Buffer): Promise<FuzzResult> {
    return new Promise((resolve) => {
      const socket = connect({ host: this.host, port: this.port });
      let received = Buffer.alloc(0);
      let settled = false;
      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        const text = received.toString('latin1');
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
        resolve({ status: status ? Number(status[1]) : undefined, body: text.slice(0, 2_000), error: status ? undefined : error ?? 'closed without an answer' });
      };
      const timer = setTimeout(() => finish('no answer within 5 s'), 5_000);
      socket.on('connect', () => socket.write(bytes));
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const text = received.toString('latin1');
        const head = text.indexOf('\r\n\r\n');
        if (head < 0) return;
        const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
        if (!length || received.length >= head + 4 + Number(length[1])) finish();
      });
      socket.on('end', () => finish());
      socket.on('close', () => finish());
      socket.on('error', (error) => finish(String(error)));
    });
  }
}

/**
 * Runs `work` over `items` with `concurrency` workers; stops taking new items once `stop()` says so.
 * The items are pulled lazily, so that big bodies exist only while they are in flight.
 */
export async function pool<T>(items: Iterable<T>, concurrency: number, work: (item: T) => Promise<void>, stop: () => boolean): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const worker = async () => {
    for (;;) {
      if (stop()) return;
      const next = iterator.next();
      if (next.done) return;
      await work(next.value);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A short, printable form of a request for failure messages (bytes that are not UTF-8 shown as \xNN). */
export function describe(req: FuzzRequest, max = 600): string {
  if (req.raw) return `raw bytes ${JSON.stringify(printable(req.raw, max))}`;
  const headers = Object.entries(req.headers ?? {})
    .map(([name, value]) => `${name}: ${clip(String(value), 120)}`)
    .join(' | ');
  const body = req.body === undefined ? '(no body)' : printable(Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body), max);
  return `${req.method} ${clip(req.path, 300)}${headers ? `  [${headers}]` : ''}  body: ${body}${req.note ? `  (${req.note})` : ''}`;
}

export function sizeOf(req: FuzzRequest): number {
  if (req.raw) return req.raw.length;
  const body = req.body === undefined ? 0 : Buffer.byteLength(req.body);
  const headers = Object.entries(req.headers ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  return req.path.length + headers + body;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

function printable(bytes: Buffer, max: number): string {
  const text = bytes.toString('utf8');
  const exact = Buffer.from(text, 'utf8').equals(bytes);
  let shown = '';
  if (exact) {
    for (const ch of text.slice(0, max)) {
      const code = ch.codePointAt(0)!;
      shown += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
    }
  } else {
    for (const byte of bytes.subarray(0, max)) {
      shown += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
    }
  }
  const length = exact ? text.length : bytes.length;
  return length > max ? `${shown}…(${bytes.length} bytes)` : shown;
}
