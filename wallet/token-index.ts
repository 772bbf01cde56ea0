import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../actors/acked-publisher.js';
import { ExpectedSequenceMismatch, messageObject, StreamJournal, streamMessage } from '../actors/stream-journal.js';
import { WALLET_TOKENS_STREAM, walletTokenSubject } from '../actors/subjects.js';
import type { Wallet } from '../machines/wallet/types.js';
import { sha256Hex } from './secrets.js';
import type { WalletDesk } from './wallet-desk.js';

/** What a one-time or access token (or a checkout's id) opens: the wallet, and which kind of token it is. */
export interface TokenRecord {
  tokenHash: string;
  walletId: string;
  kind: 'pairing' | 'pairing_code' | 'access' | 'checkout' | 'reservation';
}

const KNOWN_AT_MOST = 100_000;

/** What a wallet owns and is found by id (a checkout, a reservation): indexed under the hash of `<kind>:<id>`. */
export type OwnedKind = 'checkout' | 'reservation';
export const ownedKey = (kind: OwnedKind, id: string) => sha256Hex(`${kind}:${id}`);
const OWNED_ID: Record<OwnedKind, RegExp> = { checkout: /^co_[1-9A-HJ-NP-Za-km-z]{20,40}$/, reservation: /^rsv_[1-9A-HJ-NP-Za-km-z]{20,40}$/ };

/** The wallet that owns the checkout or reservation `id`, as its journal now holds it; undefined when none does. */
export async function ownerOf(tokens: TokenIndex, desk: WalletDesk, kind: OwnedKind, id: string): Promise<Wallet | undefined> {
  if (!OWNED_ID[kind].test(id)) return undefined;
  const record = await tokens.lookup(ownedKey(kind, id));
  return record?.kind === kind ? desk.read(record.walletId) : undefined;
}

/** The hash has a record already (the same one written before, or by chance another). */
export class TokenTaken extends Error {}

function decodeToken(data: Uint8Array, subject: string): TokenRecord | undefined {
  const value = messageObject<TokenRecord>(data);
  const wellShaped = value !== undefined && typeof value.tokenHash === 'string' && typeof value.walletId === 'string' && walletTokenSubject(value.tokenHash) === subject;
  return wellShaped ? (value as TokenRecord) : undefined;
}

/**
 * Which wallet a token's SHA-256 opens (`PACT_WALLET_TOKENS`, a subject per hash, written once): the tokens
 * themselves are never stored. Whether a token is still good is the wallet's to say (its pairing, its access hash).
 */
export class TokenIndex extends StreamJournal<TokenRecord> {
  /** Records read lately (they never change): at most KNOWN_AT_MOST, the oldest forgotten first. */
  private readonly known = new Map<string, TokenRecord>();

  constructor(
    publisher: Publisher,
    private readonly manager: JetStreamManager,
  ) {
    super(publisher, manager, { stream: WALLET_TOKENS_STREAM, subjectOf: walletTokenSubject, idOf: (record) => record.tokenHash, messageIdOf: (record) => walletTokenSubject(record.tokenHash), decode: decodeToken });
  }

  /** Records `record`; a hash already taken (by chance, never in practice) is refused. */
  async add(record: TokenRecord): Promise<void> {
    try {
      await this.append(record, 0);
    } catch (error) {
      if (error instanceof ExpectedSequenceMismatch) throw new TokenTaken('a token hash is taken already');
      throw error;
    }
    this.remember(record);
  }

  async lookup(tokenHash: string): Promise<TokenRecord | undefined> {
    const known = this.known.get(tokenHash);
    if (known) return known;
    const message = await streamMessage(this.manager, WALLET_TOKENS_STREAM, { last_by_subj: walletTokenSubject(tokenHash) });
    const record = message ? decodeToken(message.data, message.subject) : undefined;
    if (record) this.remember(record);
    return record;
  }

  private remember(record: TokenRecord): void {
    if (this.known.size >= KNOWN_AT_MOST) this.known.delete(this.known.keys().next().value as string);
    this.known.set(record.tokenHash, record);
  }
}
