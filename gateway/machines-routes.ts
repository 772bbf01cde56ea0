import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { JournalRow } from '../projection/pact-journal-feed.js';
import type { ReadModel } from '../projection/read-model.js';
import { pactError } from '../protocol/errors.js';
import { PACT_ID } from '../protocol/ids.js';
import { sendError } from './errors.js';
import { MACHINES_CSP, machinesPage, pactPage } from './machines-page.js';

export interface MachineRouteDeps {
  readModel: ReadModel;
  /** A pact's journal rows after a stream sequence, then live as they are appended, until the signal aborts. */
  journalFeed: (pactId: string, afterSeq: number, signal: AbortSignal) => AsyncIterable<JournalRow>;
}

const asset = (name: string) => readFileSync(new URL(`./machines/${name}`, import.meta.url), 'utf8');
const LIVE_JS = asset('live.js');
const MACHINES_CSS = asset('machines.css');
/** Live views one node feeds at once (each holds a NATS consumer); more wait for a place. */
const MAX_LIVE_VIEWS = 100;
const MAX_LIVE_VIEWS_PER_CLIENT = 10;
const HEARTBEAT_MS = 15_000;

/**
 * The machines for people: `GET /machines` (every statechart), `GET /machines/pacts/:id` (the pact chart with
 * its state highlighted and its journal, live) and `GET /machines/pacts/:id/journal`, the journal as
 * server-sent events (`id` is the stream sequence, so a reconnecting browser resumes after the last it saw).
 */
export function registerMachineRoutes(app: FastifyInstance, { readModel, journalFeed }: MachineRouteDeps): void {
  const views = new LiveViews();
  app.addHook('preClose', async () => views.closeAll()); // an open view must not hold the node's shutdown
  const html = { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': MACHINES_CSP };
  const asset = { 'x-content-type-options': 'nosniff' };
  const everyMachine = machinesPage(); // the same page for every request: made once
  app.get('/machines', async (_request, reply) => reply.headers(html).send(everyMachine));
  app.get('/machines/machines.css', async (_request, reply) => reply.headers(asset).type('text/css; charset=utf-8').send(MACHINES_CSS));
  app.get('/machines/live.js', async (_request, reply) => reply.headers(asset).type('text/javascript; charset=utf-8').send(LIVE_JS));

  app.get<{ Params: { id: string } }>('/machines/pacts/:id', async (request, reply) => {
    const pact = PACT_ID.test(request.params.id) ? await readModel.get(request.params.id) : undefined;
    if (!pact) return sendError(reply, pactError('not_found', `no pact ${request.params.id}`));
    return reply.headers({ ...html, 'cache-control': 'no-store' }).send(pactPage(pact));
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>('/machines/pacts/:id/journal', async (request, reply) => {
    // Listened for before anything is awaited: a client gone meanwhile must not hold a place.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const { id } = request.params;
    if (!PACT_ID.test(id) || !(await readModel.get(id))) return sendError(reply, pactError('not_found', `no pact ${id}`));
    const after = resumeAfter(request.headers['last-event-id'] ?? request.query.after);
    if (after === undefined) return sendError(reply, pactError('invalid_request', 'Last-Event-ID (or after) is a journal sequence', { field: 'Last-Event-ID' }));
    const refused = views.refusal(request.ip);
    if (refused) return sendError(reply.header('retry-after', '5'), refused);
    if (gone.signal.aborted || reply.raw.destroyed) return reply;
    const release = views.open(request.ip, gone);
    reply.hijack();
    const raw = reply.raw;
    const send = (text: string) => raw.write(text, (error) => error && gone.abort());
    raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    send('retry: 2000\n\n');
    const heartbeat = setInterval(() => send(': still here\n\n'), HEARTBEAT_MS);
    try {
      for await (const row of journalFeed(id, after, gone.signal)) send(`id: ${row.seq}\nevent: entry\ndata: ${JSON.stringify(row)}\n\n`);
    } catch (error) {
      // NATS went away: the browser reconnects (after `retry`) and resumes from its Last-Event-ID.
      if (!gone.signal.aborted) console.error(`the live journal of ${id} stopped:`, String(error));
    } finally {
      clearInterval(heartbeat);
      release();
      raw.end();
    }
  });
}

/** The live views a node feeds: at most so many in all and per client, each ended when the node closes. */
class LiveViews {
  private readonly views = new Set<AbortController>();
  private readonly perClient = new Map<string, number>();

  refusal(client: string) {
    if (this.views.size >= MAX_LIVE_VIEWS) return pactError('rate_limited', 'too many live views on this server; retry shortly', { retryAfter: 5 });
    if ((this.perClient.get(client) ?? 0) >= MAX_LIVE_VIEWS_PER_CLIENT) return pactError('rate_limited', `at most ${MAX_LIVE_VIEWS_PER_CLIENT} live views per client`, { retryAfter: 5 });
    return undefined;
  }

  /** Counts a view in; the function returned counts it out (once). */
  open(client: string, view: AbortController): () => void {
    this.views.add(view);
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.views.delete(view);
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    };
  }

  closeAll(): void {
    for (const view of this.views) view.abort();
  }
}

/** The stream sequence a reconnecting browser saw last (0: from the start); undefined when the header is not one. */
function resumeAfter(header: string | string[] | undefined): number | undefined {
  if (header === undefined || header === '') return 0;
  return typeof header === 'string' && /^[0-9]{1,15}$/.test(header) ? Number(header) : undefined;
}
