// The live view of one pact (GET /machines/pacts/:id): its journal comes as server-sent events from the
// journal on NATS; each applied command becomes a row, and the state it leads to is highlighted in the chart.
const main = document.querySelector('main[data-pact]');
const rows = document.querySelector('#journal tbody');
const live = document.querySelector('#live');
const stateText = document.querySelector('#state');

function highlight(state) {
  for (const node of document.querySelectorAll('.chart g.node.current')) node.classList.remove('current');
  document.querySelector(`.chart g.node[data-id="${CSS.escape(state)}"]`)?.classList.add('current');
  stateText.textContent = state;
  main.dataset.state = state;
}

function cell(text, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

/** The event without what the other columns say, as compact JSON. */
function details(event) {
  const { type, at, ...rest } = event;
  return Object.keys(rest).length ? `${type} ${JSON.stringify(rest)}` : type;
}

function rowOf(row) {
  const tr = document.createElement('tr');
  tr.dataset.seq = row.seq;
  const eventCell = cell('', 'event');
  eventCell.append(Object.assign(document.createElement('code'), { textContent: details(row.event) }));
  const payouts = (row.payouts ?? []).map((p) => `${p.kind} ${p.amount} ${p.asset} → ${p.party}`).join('\n');
  const signer = cell(row.signer ?? 'server', 'signer');
  signer.title = row.signer ?? 'the server (a deadline or a payout)';
  tr.append(cell(new Date(row.at).toISOString().replace('T', ' ').slice(0, 19), 'time'), cell(String(row.nonce)), signer, eventCell, cell(row.state ?? '', 'state'), cell(payouts));
  return tr;
}

const source = new EventSource(`/machines/pacts/${encodeURIComponent(main.dataset.pact)}/journal`);
source.addEventListener('entry', (message) => {
  const row = JSON.parse(message.data);
  if (rows.querySelector(`tr[data-seq="${row.seq}"]`)) return;
  rows.append(rowOf(row));
  if (row.state) highlight(row.state);
  main.dataset.rows = String(rows.children.length);
});
source.addEventListener('open', () => {
  live.textContent = 'live';
  live.classList.add('on');
});
source.addEventListener('error', () => {
  live.textContent = 'reconnecting…';
  live.classList.remove('on');
});
