import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BlobStore } from '../blobs/blob-store.js';
import type { LocalBlobStore } from '../blobs/local-blob-store.js';
import { MAX_BLOBS_PER_PACT, type PactBlobs } from '../blobs/pact-blobs.js';
import type { UploadRoom } from '../blobs/upload-room.js';
import { isFunded, partyOf } from '../machines/pact/rules.js';
import type { Pact } from '../machines/pact/types.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { issuedAtProblem } from '../protocol/issued-at.js';
import { PACT_ID, SHA256_HEX } from '../protocol/ids.js';
import { isPartyId } from '../protocol/party.js';
import { verifySignature } from '../protocol/verify.js';
import type { ReadModel } from '../projection/read-model.js';
import type { AccessGate } from '../access/gate.js';
import type { Clock } from '../runtime/clock.js';
import { badSignature, sendError, unknownPact } from './errors.js';
import { limitFor, type RateLimits } from './rate-limits.js';

export interface BlobLimits {
  /** PACT_BLOB_MAX_BYTES: the largest blob, inclusive. */
  maxBytes: number;
  /** PACT_BLOB_LINK_TTL_MS: how long a download link works. */
  linkTtlMs: number;
  /** PACT_BLOB_UPLOADS_AT_ONCE: uploads received at the same time; more wait (429). */
  uploadsAtOnce: number;
  /** PACT_BLOB_MIN_FREE_BYTES: free disk an upload must leave under the data directory (else 503). */
  minFreeBytes: number;
}

export interface BlobRouteDeps {
  blobs: {
    store: BlobStore;
    /** The store that serves `/dl/<token>` itself; a remote store's links point elsewhere. */
    local: LocalBlobStore | undefined;
    uploads: PactBlobs;
    limits: BlobLimits;
    room: UploadRoom;
  };
  readModel: ReadModel;
  clock: Clock;
  rateLimits: RateLimits;
  access: { gate: AccessGate };
}

const SIG = /^[0-9a-f]{128}$/;
const MILLIS = /^(0|[1-9][0-9]{0,15})$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const OCTET_STREAM = 'application/octet-stream';

type Params = { id: string };
type LinkParams = { id: string; hash: string };
interface LinkBody {
  signer: string;
  issuedAt: number;
  sig: string;
}

const linkBody = {
  type: 'object',
  required: ['signer', 'issuedAt', 'sig'],
  additionalProperties: false,
  properties: {
    signer: { type: 'string', maxLength: 64 },
    issuedAt: { type: 'integer', minimum: 0 },
    sig: { type: 'string', pattern: SIG.source },
  },
} as const;

/**
 * Evidence blobs (spec "Blobs", DECISIONS.md "Blobs"): signed uploads of raw bytes, content-addressed;
 * signed link requests; downloads by link. Only the pact's parties and its pinned evaluator may upload;
 * only its funded parties and the evaluator get links.
 */
export function registerBlobRoutes(app: FastifyInstance, deps: BlobRouteDeps): void {
  const writes = limitFor(deps.rateLimits, 'writes');
  void app.register(async (scope) => {
    // The body reaches the handler as the request stream, unread: it is hashed on its way to disk. Any
    // content type gets there, so that the handler answers a wrong one in the one error shape (415).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    // A refusal answered before the body was read closes the connection: the rest is never drained.
    scope.addHook('onSend', async (request, reply) => {
      if (!request.raw.readableEnded) reply.header('connection', 'close');
    });
    scope.post<{ Params: Params }>('/pacts/:id/blobs', writes, (request, reply) => upload(request, reply, deps));
  });
  app.post<{ Params: LinkParams; Body: LinkBody }>('/pacts/:id/blobs/:hash/link', { ...writes, schema: { body: linkBody } }, (request, reply) =>
    link(request, reply, deps),
  );
  const local = deps.blobs.local;
  if (local) app.get<{ Params: { token: string } }>('/dl/:token', (request, reply) => download(request, reply, local, deps.clock));
}

interface UploadHeaders {
  signer: string;
  issuedAt: number;
  sig: string;
  sha256: string | undefined;
}

/** The signed headers of an upload, or what is wrong with them. */
function uploadHeaders(request: FastifyRequest): UploadHeaders | PactError {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const [signer, issuedAt, sig, sha256] = ['x-pact-signer', 'x-pact-issued-at', 'x-pact-signature', 'x-pact-sha256'].map(header);
  const invalid = (field: string, message: string) => pactError('invalid_request', message, { field });
  if (!signer || !isPartyId(signer)) return invalid('x-pact-signer', 'x-pact-signer must be a party id (ed25519:<base58 key>)');
  if (!issuedAt || !MILLIS.test(issuedAt)) return invalid('x-pact-issued-at', 'x-pact-issued-at must be milliseconds');
  if (!sig || !SIG.test(sig)) return invalid('x-pact-signature', 'x-pact-signature must be 128 lowercase hex characters');
  if (sha256 !== undefined && !SHA256_HEX.test(sha256)) return invalid('x-pact-sha256', 'x-pact-sha256 must be 64 lowercase hex characters');
  return { signer, issuedAt: Number(issuedAt), sig, sha256 };
}

const putSigned = (pactId: string, sha256: string, issuedAt: number) => ({ action: 'put', pactId, sha256, issuedAt });
const mayUpload = (pact: Pact, signer: string) => partyOf(pact, signer as Pact['proposer']) !== undefined || signer === pact.evaluator.pubkey;
/** The access gate for an upload, which the pact's own evaluator does not pass. */
const uploaderAccess = (deps: BlobRouteDeps, pact: Pact, signer: string) => (signer === pact.evaluator.pubkey ? undefined : deps.access.gate.problem(signer));
const mayLink = (pact: Pact, signer: string) => isFunded(pact, signer as Pact['proposer']) || signer === pact.evaluator.pubkey;

/**
 * An upload is checked before its body is read wherever it can be: headers (400, 415), size declared (413),
 * room (429 while too many uploads run, 503 when the disk is nearly full), the pact (404), the signature
 * when `x-pact-sha256` declares the signed hash (401), who signs (403), the pact still open (409),
 * issuedAt (422). Without that header the signature is checked against the hash of the bytes received, and
 * a mismatch is a 401 (a changed body and a forged signature look the same); with it, bytes that do not
 * hash to it are 400 `hash_mismatch`. Nothing refused stays on disk.
 */
async function upload(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, deps: BlobRouteDeps): Promise<FastifyReply> {
  const { id } = request.params;
  const { limits } = deps.blobs;
  if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
  if (request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() !== OCTET_STREAM) {
    return sendError(reply, pactError('unsupported_media_type', `a blob is sent as ${OCTET_STREAM}`));
  }
  const headers = uploadHeaders(request);
  if ('error' in headers) return sendError(reply, headers);
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limits.maxBytes) return tooLarge(reply, limits.maxBytes);
  const room = await deps.blobs.room.claim(declared || limits.maxBytes);
  if ('refused' in room) return sendError(reply.header('retry-after', '1'), room.refused);
  try {
    return await checkedUpload(request, reply, deps, headers);
  } finally {
    room.release();
  }
}

async function checkedUpload(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, deps: BlobRouteDeps, headers: UploadHeaders): Promise<FastifyReply> {
  const { id } = request.params;
  const pact = await deps.readModel.get(id);
  if (!pact) return sendError(reply, unknownPact(id));
  const { signer, issuedAt, sig, sha256 } = headers;
  if (sha256 !== undefined && !verifySignature(signer, putSigned(id, sha256, issuedAt), sig)) return sendError(reply, badSignature());
  const closed = sha256 !== undefined ? await uploaderAccess(deps, pact, signer) : undefined;
  if (closed) return sendError(reply, closed);
  if (!mayUpload(pact, signer)) return sendError(reply, pactError('forbidden', 'only the pact’s parties and its evaluator may upload'));
  if (pact.state === 'SETTLED' || pact.state === 'CANCELLED') return sendError(reply, pactError('invalid_state', `the pact is ${pact.state}`, { state: pact.state }));
  const stale = issuedAtProblem(issuedAt);
  if (stale) return sendError(reply, stale);
  return receive(request, reply, deps, headers, pact);
}

/** Receives the body, keeps it if it is what was signed and the pact has room, and records it. */
async function receive(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, deps: BlobRouteDeps, headers: UploadHeaders, pact: Pact): Promise<FastifyReply> {
  const { id } = request.params;
  const { store, uploads, limits } = deps.blobs;
  const { signer, issuedAt, sig, sha256 } = headers;
  let received;
  try {
    received = await store.receive(bodyStream(request), limits.maxBytes);
  } catch (error) {
    if (!request.raw.readableEnded) return sendError(reply, pactError('invalid_request', 'the body did not arrive whole'));
    throw error;
  }
  if (received === 'too_large') return tooLarge(reply, limits.maxBytes);
  const refuse = async (refusal: PactError) => {
    await received.discard();
    return sendError(reply, refusal);
  };
  if (sha256 !== undefined && received.hash !== sha256) {
    return refuse(pactError('hash_mismatch', 'the bytes do not hash to x-pact-sha256', { sha256: received.hash }));
  }
  if (sha256 === undefined) {
    if (!verifySignature(signer, putSigned(id, received.hash, issuedAt), sig)) return refuse(badSignature());
    const closed = await uploaderAccess(deps, pact, signer);
    if (closed) return refuse(closed);
  }
  if (!(await uploads.add(id, received.hash, { size: received.size, at: deps.clock.now(), by: signer }))) {
    return refuse(pactError('blob_limit_reached', `a pact holds at most ${MAX_BLOBS_PER_PACT} blobs`, { limit: MAX_BLOBS_PER_PACT }));
  }
  await received.keep();
  return reply.send({ hash: received.hash });
}

/**
 * The request body as a stream of its own: when it is refused part way (too large), only this stream is
 * torn down, and the request stays whole to be answered; when the client goes away part way, it fails.
 */
function bodyStream(request: FastifyRequest): Readable {
  const raw = request.body as Readable;
  const body = new PassThrough();
  raw.once('error', (error) => body.destroy(error));
  raw.once('close', () => {
    if (!raw.readableEnded) body.destroy(new Error('the client went away during the upload'));
  });
  return raw.pipe(body);
}

/** 413; the rest of an oversize body is not read (the connection closes after the answer). */
function tooLarge(reply: FastifyReply, maxBytes: number): FastifyReply {
  return sendError(reply, pactError('too_large', `a blob is at most ${maxBytes} bytes`, { limit: maxBytes }));
}

async function link(request: FastifyRequest<{ Params: LinkParams; Body: LinkBody }>, reply: FastifyReply, deps: BlobRouteDeps): Promise<FastifyReply> {
  const { id, hash } = request.params;
  if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
  if (!SHA256_HEX.test(hash)) return sendError(reply, pactError('not_found', `no blob ${hash}`));
  const pact = await deps.readModel.get(id);
  if (!pact) return sendError(reply, unknownPact(id));
  const { signer, issuedAt, sig } = request.body;
  if (!verifySignature(signer, { action: 'link', pactId: id, hash, issuedAt }, sig)) return sendError(reply, badSignature());
  if (!mayLink(pact, signer)) return sendError(reply, pactError('forbidden', 'links are only for the pact’s funded parties and its evaluator'));
  const now = deps.clock.now();
  const stale = issuedAtProblem(issuedAt);
  if (stale) return sendError(reply, stale);
  if (!(await deps.blobs.uploads.has(id, hash))) return sendError(reply, pactError('not_found', `no blob ${hash} on pact ${id}`));
  const expiresAt = now + deps.blobs.limits.linkTtlMs;
  return reply.send({ url: await deps.blobs.store.link(hash, expiresAt), expiresAt });
}

async function download(request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply, store: LocalBlobStore, clock: Clock): Promise<FastifyReply> {
  const { token } = request.params;
  const found = TOKEN.test(token) ? await store.download(token, clock.now()) : 'unknown';
  if (found === 'unknown') return sendError(reply, pactError('not_found', 'no such link'));
  if (found === 'expired') return sendError(reply, pactError('link_expired', 'the link has expired; ask for a new one'));
  return reply.type(OCTET_STREAM).header('content-length', found.size).send(createReadStream(found.path));
}
