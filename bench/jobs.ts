/**
 * What the bench (bench/main.ts) asks of its load generator (bench/worker/main.ts), a second Node process,
 * so that signing and sending never share a process with the bench's own bookkeeping.
 *
 * Every job runs in two steps: the worker prepares it (generates keys, signs every call) and answers
 * `ready`; the bench then notes the CPU times of all processes and says `go`; the worker sends the
 * prepared requests and answers with what it measured.
 */
export type Job =
  /** Whole pact lifecycles, `concurrency` of them in flight. */
  | { kind: 'lifecycles'; url: string; count: number; concurrency: number }
  /** Creates that leave pacts in CREATED; the worker keeps their keys for a later `cold` job. */
  | { kind: 'creates'; url: string; count: number; concurrency: number }
  /** One at a time on `count` pacts of the earlier `creates`: a fund on the passivated pact, then one on the live pact. */
  | { kind: 'cold'; url: string; count: number }
  /** Offers published, `concurrency` in flight; their tags and words are drawn from `vocabulary` (bench/offers.ts). */
  | { kind: 'offers'; url: string; count: number; concurrency: number; vocabulary: OfferVocabulary }
  /** Agent Stream events published (signed with node:crypto before the timing), `concurrency` in flight. */
  | { kind: 'events'; url: string; count: number; concurrency: number }
  /**
   * `GET paths` round-robin for `seconds`, `concurrency` requests in flight, tallied under `route`; with
   * `bodies` (one per path), `POST`s them.
   */
  | { kind: 'reads'; url: string; route: string; paths: string[]; bodies?: string[]; seconds: number; concurrency: number };

/** Tags `t0`… and words `w0`… that offers are made of; each offer has `tagsPerOffer` tags and `wordsPerOffer` words. */
export interface OfferVocabulary {
  tags: number;
  words: number;
  tagsPerOffer: number;
  wordsPerOffer: number;
}

export interface Measured {
  /** The time the requests took to send and answer (without the signing). */
  wallMs: number;
  /** Latency in ms of every answered request, by route. */
  byRoute: Record<string, number[]>;
  /** Unexpected answers and errors, with their counts. */
  failures: [string, number][];
  /** Ids of the pacts the job completed (settled lifecycles, created pacts). */
  ids: string[];
}

export type ToWorker = { job: Job } | { go: true };
export type FromWorker = { ready: true } | { measured: Measured } | { error: string };
