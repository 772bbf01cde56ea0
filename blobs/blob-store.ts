import type { Readable } from 'node:stream';

/**
 * Where evidence bytes live. The local store keeps them on disk and serves its own `/dl/<token>` links; a
 * remote store (an object store, say) plugs in by implementing this interface: `receive` streams to it,
 * `link` returns an absolute signed URL of its own, and the gateway then mounts no `/dl` route
 * (docs/ARCHITECTURE.md, "Blobs").
 */
export interface BlobStore {
  /**
   * Streams `body` in while hashing it, into a place where nothing reads it yet. More than `maxBytes`
   * is `'too_large'` and leaves nothing behind; so does a stream that fails.
   */
  receive(body: Readable, maxBytes: number): Promise<Received | 'too_large'>;
  /** A download URL of the stored blob `hash`, valid until `expiresAt` (server clock, ms). */
  link(hash: string, expiresAt: number): Promise<string>;
}

/** Bytes received and hashed, not yet stored: `keep` stores them under their hash, `discard` drops them. */
export interface Received {
  /** Lowercase hex SHA-256 of the bytes. */
  hash: string;
  size: number;
  keep(): Promise<void>;
  discard(): Promise<void>;
}

/** What a `/dl/<token>` link gives: the blob's file and size, or why not. */
export type Download = { path: string; size: number } | 'expired' | 'unknown';
