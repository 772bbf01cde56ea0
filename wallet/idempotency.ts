import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../actors/acked-publisher.js';
import { ExpectedSequenceMismatch, messageObject, StreamJournal, streamMessage } from '../actors/stream-journal.js';
import { WALLET_IDEMPOTENCY_STREAM, walletIdempotencySubject } from '../actors/subjects.js';
import { jcs } from '../protocol/jcs.js';
import { sha256Hex } from './secrets.js';

/** An `Idempotency-Key`'s record: begun with the request's body hash, then done with the first response, sealed. */
interface IdempotencyRecord {
  id: string;
  bodyHash: string;
  at: number;
  response?: Sealed;
}

/** AES-256-GCM under a key derived from the Idempotency-Key itself: the store never holds a response (a pairing token, say) in clear. */
interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

const sealingKey = (idempotencyKey: string, recordId: string) => Buffer.from(hkdfSync('sha256', idempotencyKey, recordId, 'pact wallet idempotency', 32));

function seal(key: Buffer, response: { status: number; body: unknown }): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

function unseal(key: Buffer, sealed: Sealed): { status: number; body: unknown } {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8'));
}

/** What a request with an `Idempotency-Key` may do: its work (then `finish`), or answer as the key says. */
export type IdempotentStart =
  | { begun: { finish(status: number, body: unknown): Promise<void>; abandon(): Promise<void> } }
  | { replay: { status: number; body: unknown } }
  | { refusal: 'idempotency_in_progress' | 'idempotency_key_reused' };

/** A key begun and never finished this long ago (its process died) may be begun again. */
const ABANDONED_AFTER_MS = 60_000;

function decodeRecord(data: Uint8Array, subject: string): IdempotencyRecord | undefined {
  const value = messageObject<IdempotencyRecord>(data);
  const wellShaped = value !== undefined && typeof value.id === 'string' && typeof value.bodyHash === 'string' && typeof value.at === 'number' && walletIdempotencySubject(value.id) === subject;
  return wellShaped ? (value as IdempotencyRecord) : undefined;
}

/**
 * `Idempotency-Key` with Stripe's semantics, on NATS (`PACT_WALLET_IDEMPOTENCY`, kept two days): a subject per
 * scope and key whose first message begins the work (appended only while the subject is empty, so one request
 * in the whole deployment does it) and whose second holds the first response, returned to every retry with
 * the same body. The same key with another body is refused; one still at work, too.
 */
export class IdempotencyStore extends StreamJournal<IdempotencyRecord> {
  constructor(
    publisher: Publisher,
    private readonly manager: JetStreamManager,
    private readonly now: () => number,
  ) {
    super(publisher, manager, {
      stream: WALLET_IDEMPOTENCY_STREAM,
      subjectOf: walletIdempotencySubject,
      idOf: (record) => record.id,
      messageIdOf: (record) => `${record.id}:${record.response ? 'done' : `begun:${record.at}:${record.bodyHash.slice(0, 16)}`}`,
      decode: decodeRecord,
    });
  }

  /** Begins the work of `key` in `scope` for a request whose body is `body`, or says how to answer instead. */
  async start(scope: string, key: string, body: unknown): Promise<IdempotentStart> {
    const id = sha256Hex(`${scope}\n${key}`);
    const secret = sealingKey(key, id);
    const bodyHash = sha256Hex(jcs(body ?? null)); // the same body whatever the order of its keys
    for (;;) {
      const last = await streamMessage(this.manager, WALLET_IDEMPOTENCY_STREAM, { last_by_subj: walletIdempotencySubject(id) });
      const record = last ? decodeRecord(last.data, last.subject) : undefined;
      if (record && record.bodyHash !== bodyHash) return { refusal: 'idempotency_key_reused' };
      if (record?.response) return { replay: unseal(secret, record.response) };
      if (record && this.now() - record.at < ABANDONED_AFTER_MS) return { refusal: 'idempotency_in_progress' };
      const begun: IdempotencyRecord = { id, bodyHash, at: this.now() };
      let seq: number;
      try {
        seq = await this.append(begun, last?.seq ?? 0);
      } catch (error) {
        if (error instanceof ExpectedSequenceMismatch) continue; // another request began it first: answer as it says
        throw error;
      }
      return {
        begun: {
          finish: (status, responseBody) => this.append({ ...begun, response: seal(secret, { status, body: responseBody }) }, seq).then(() => undefined),
          // Work that failed leaves the key free at once (a record begun at time 0 reads as abandoned).
          abandon: () => this.append({ ...begun, at: 0 }, seq).then(() => undefined),
        },
      };
    }
  }
}
