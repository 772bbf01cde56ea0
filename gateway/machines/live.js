// The live view of one pact (GET /machines/pacts/:id): its journal comes as server-sent events from the
// journal on NATS; each applied command becomes a row, and the state it leads to is highlighted in the chart.
const main = document.querySelector('main[data-pact]');
const rows = document.querySelector('#journal tbody');
const live = document.querySelector('#live');
const stateText = document.querySelector('#state');
let lastSeq = 0;
let retryMs = 1000;

function highlight(state) {
  for (const node of document.querySelectorAll('.chart g.node.current')) node.classList.remove('current');
  document.querySelector(`.chart g.node[data-id="${CSS.escape(state)}"]`)?.classList.add('current');
  stateText.textContent = state;
  main.dataset.state = state;
}

/** A cell; `label` names its column where a narrow screen stacks the cells. */
function cell(label, text, className) {
  const td = document.createElement('td');
  td.dataset.label = label;
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

/** The event without what the other columns say, as compact JSON. */
function details(event) {
  const { type, ...rest } = event;
  return Object.keys(rest).length ? `${type} ${JSON.stringify(rest)}` : type;
}

function rowOf(row) {
  const tr = document.createElement('tr');
  tr.dataset.seq = row.seq;
  const eventCell = cell('event', '', 'event');
  eventCell.append(Object.assign(document.createElement('code'), { textContent: details(row.event) }));
  const signer = cell('signer', row.signer ?? 'unsigned', 'signer');
  signer.title = row.signer ?? 'no signature: a deadline poke (anyone may send one) or the payout worker recording what it paid';
  const payouts = (row.payouts ?? []).map((p) => `${p.kind} ${p.amount} ${p.asset} → ${p.party}`).join('\n');
  const time = `${new Date(row.at).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  tr.append(cell('time', time, 'time'), cell('nonce', String(row.nonce)), signer, eventCell, cell('state', row.state ?? '', 'state'), cell('payouts', payouts, 'payouts'));
  return tr;
}

function onEntry(message) {
  const row = JSON.parse(message.data);
  if (row.seq <= lastSeq) return;
  lastSeq = row.seq;
  rows.append(rowOf(row));
  if (row.state) highlight(row.state);
  main.dataset.rows = String(rows.children.length);
}

function showLive(on) {
  live.textContent = on ? 'live' : 'reconnecting…';
  live.classList.toggle('on', on);
}

/**
 * Follows the journal. The browser reconnects by itself after a dropped stream (sending Last-Event-ID); a
 * stream refused outright (a full server, say) it gives up, so this opens a new one later, after the last row.
 */
function follow() {
  const source = new EventSource(`/machines/pacts/${encodeURIComponent(main.dataset.pact)}/journal?after=${lastSeq}`);
  source.addEventListener('entry', onEntry);
  source.addEventListener('open', () => {
    retryMs = 1000;
    showLive(true);
  });
  source.addEventListener('error', () => {
    showLive(false);
    if (source.readyState !== EventSource.CLOSED) return;
    setTimeout(follow, retryMs);
    retryMs = Math.min(retryMs * 2, 30_000);
  });
}

follow();
