import type { EventProjector } from './event-projector.js';
import { cursorOf, seqOfCursor, type PullPage } from './pull.js';

/** The page of matching events after a stream sequence now (`pullPage` with the request's limit and filter). */
export type PageAfter = (after: number) => Promise<PullPage>;

/**
 * A long poll (a pull with `waitSeconds`): while nothing matches and nothing more is to be read, it waits
 * for the node's event projector to write new events (published through any node), then pulls again from
 * where it stood, until `ends` (epoch ms), when it looks once more. A client gone (`signal`) ends it with
 * no further pull (none at all when it left before the poll began).
 */
export async function longPoll(pageAfter: PageAfter, projector: Pick<EventProjector, 'onceEvents'>, after: number, ends: number, signal: AbortSignal): Promise<PullPage> {
  if (signal.aborted) return { events: [], nextCursor: cursorOf(after), hasMore: false }; // for nobody: not read
  for (;;) {
    const woken = nextEvents(projector, ends - Date.now(), signal);
    const page = await pageAfter(after).catch((error: unknown) => {
      woken.cancel();
      throw error;
    });
    if (page.events.length > 0 || page.hasMore || Date.now() >= ends || signal.aborted) {
      woken.cancel();
      return page;
    }
    after = seqOfCursor(page.nextCursor)!;
    if (!(await woken.promise)) return signal.aborted ? page : pageAfter(after);
  }
}

/** Resolves to true when the projector next writes events, false after `timeoutMs` or an abort. */
function nextEvents(projector: Pick<EventProjector, 'onceEvents'>, timeoutMs: number, signal: AbortSignal): { promise: Promise<boolean>; cancel: () => void } {
  let finish: (woken: boolean) => void = () => undefined;
  const promise = new Promise<boolean>((resolve) => {
    let done = false;
    const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
    const onAbort = () => finish(false);
    signal.addEventListener('abort', onAbort, { once: true });
    const unsubscribe = projector.onceEvents(() => finish(true));
    finish = (woken) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      unsubscribe();
      resolve(woken);
    };
  });
  return { promise, cancel: () => finish(false) };
}
