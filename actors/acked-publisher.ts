import { performance } from 'node:perf_hooks';
import { createInbox, headers, PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/transport-node';

/** What a JetStream publish may ask for: a message id (deduplication) and a compare-and-set. */
export interface PublishOptions {
  msgID?: string;
  expect?: { streamName?: string; lastSubjectSequence?: number };
}

/** JetStream's acknowledgement of a stored message. */
export interface Ack {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/** Whatever stores a message on a JetStream stream and says where: the service's `AckedPublisher`; the client's `js.publish` fits too (tests, the audit). */
export interface Publisher {
  publish(subject: string, data: Uint8Array | string, options?: PublishOptions): Promise<Ack>;
}

/** JetStream refused the message (its description, as nats.js words it: "wrong last sequence: 7"). */
export class PublishRefused extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

const SWEEP_MS = 250;
const decoder = new TextDecoder();

/** A publish made but not sent yet: its subject is in its `Waiting`. */
interface Outgoing {
  token: string;
  bytes: Uint8Array;
  options: PublishOptions;
}

interface Waiting {
  subject: string;
  resolve: (ack: Ack) => void;
  reject: (error: Error) => void;
  due: number;
}

/**
 * JetStream publishes as the service makes them (every journal's appends, Agent Stream events, remote commands): the message goes out
 * with a reply subject under one inbox subscription, and the acknowledgement is matched by its token. The
 * client's `js.publish` does the same through a request per message, with a timer each and a stack-traced
 * error built for every request it completes (a few percent of the main thread under load); here one timer
 * expires whatever waited longer than `timeoutMs`. A message without an answer in time may or may not be
 * stored, as with the client: the caller reads before it decides again. Answers are not lost on a reconnect
 * (the subscription is renewed), nor hurried: a publish the connection dropped simply expires. Should the
 * inbox subscription fail (a NATS user not allowed it), every publish waiting or to come is refused with that error;
 * a publish the user may not make is refused as soon as the server says so.
 */
export class AckedPublisher implements Publisher {
  private readonly inbox: string;
  private readonly waiting = new Map<string, Waiting>();
  private next = 0;
  private readonly sweeper: NodeJS.Timeout;
  /** Publishes made since the event loop last went round: they leave together (see `publish`). */
  private outgoing: Outgoing[] = [];
  /** Why acknowledgements can no longer arrive (the subscription failed): every publish is refused. */
  private broken: Error | undefined;

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix: string,
    private readonly timeoutMs = 5_000,
  ) {
    this.inbox = createInbox(inboxPrefix);
    nc.subscribe(`${this.inbox}.*`, { callback: (error, message) => (error ? this.failed(error) : this.answered(message)) });
    this.sweeper = setInterval(() => this.expire(performance.now()), SWEEP_MS).unref();
    void nc.closed().then(() => this.close());
    void this.refuseDeniedPublishes();
  }

  /** Sends the message with the others made in the same turn of the event loop, in one socket write (docs/ARCHITECTURE.md). */
  publish(subject: string, data: Uint8Array | string, options: PublishOptions = {}): Promise<Ack> {
    if (this.broken) return Promise.reject(this.broken);
    const token = (++this.next).toString(36);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data; // pooled, where the client would allocate a TextEncoder's ArrayBuffer
    return new Promise<Ack>((resolve, reject) => {
      this.waiting.set(token, { subject, resolve, reject, due: performance.now() + this.timeoutMs });
      if (this.outgoing.push({ token, bytes, options }) === 1) setImmediate(() => this.send());
    });
  }

  /** Sends what was made since the last turn, but for what was refused meanwhile (its caller has been told it failed). */
  private send(): void {
    const outgoing = this.outgoing;
    this.outgoing = [];
    for (const { token, bytes, options } of outgoing) {
      const waiting = this.waiting.get(token);
      if (!waiting) continue;
      try {
        this.nc.publish(waiting.subject, bytes, { reply: `${this.inbox}.${token}`, headers: headersOf(options) });
      } catch (error) {
        this.take(token)?.reject(error as Error);
      }
    }
  }

  private answered(message: Msg): void {
    const waiting = this.take(message.subject.slice(this.inbox.length + 1));
    if (!waiting) return; // expired already
    const outcome = ackOf(message);
    if (outcome instanceof Error) waiting.reject(outcome);
    else waiting.resolve(outcome);
  }

  /** The publish waiting under `token`, no longer waiting. */
  private take(token: string): Waiting | undefined {
    const waiting = this.waiting.get(token);
    this.waiting.delete(token);
    return waiting;
  }

  /** Refuses what waited past its time; they wait in the order they were made, each as long. */
  private expire(now: number): void {
    for (const [token, waiting] of this.waiting) {
      if (waiting.due > now) break;
      this.waiting.delete(token);
      waiting.reject(new Error(`no acknowledgement from JetStream within ${this.timeoutMs} ms; the message may be stored or not`));
    }
  }

  /** The server answers a publish it does not allow with an error on the connection, not on the reply subject. */
  private async refuseDeniedPublishes(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError) || status.error.operation !== 'publish') continue;
      for (const [token, waiting] of this.waiting) {
        if (waiting.subject !== status.error.subject) continue;
        this.waiting.delete(token);
        waiting.reject(status.error);
      }
    }
  }

  private failed(error: Error): void {
    console.error(`JetStream acknowledgements cannot reach ${this.inbox}:`, String(error));
    this.broken = error;
    this.refuseAll(error);
  }

  private close(): void {
    clearInterval(this.sweeper);
    this.refuseAll(new Error('the NATS connection closed before JetStream acknowledged; the message may be stored or not'));
  }

  private refuseAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(error);
  }
}

function headersOf({ msgID, expect }: PublishOptions) {
  const h = headers();
  if (msgID !== undefined) h.set('Nats-Msg-Id', msgID);
  if (expect?.streamName !== undefined) h.set('Nats-Expected-Stream', expect.streamName);
  if (expect?.lastSubjectSequence !== undefined) h.set('Nats-Expected-Last-Subject-Sequence', String(expect.lastSubjectSequence));
  return h;
}

/** The acknowledgement in `message`, or why there is none (no stream takes the subject, or JetStream refused). */
function ackOf(message: Msg): Ack | Error {
  if (message.headers?.hasError) return new Error(`JetStream did not take the message: ${message.headers.code} ${message.headers.description}`);
  let answer: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { code?: number; err_code?: number; description?: string } };
  try {
    answer = JSON.parse(decoder.decode(message.data));
  } catch {
    return new Error('JetStream answered a publish with something that is not JSON');
  }
  if (answer.error) return new PublishRefused(answer.error.description ?? 'refused', answer.error.err_code ?? answer.error.code ?? 0);
  if (typeof answer.stream !== 'string' || answer.stream === '' || typeof answer.seq !== 'number') return new Error('JetStream answered a publish without a stream and sequence');
  return { stream: answer.stream, seq: answer.seq, duplicate: answer.duplicate === true };
}
