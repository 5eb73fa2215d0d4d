/*
 * stacks-pulse live dashboard: a plain script (no build step) using the push API as a client would.
 *
 *  - Socket.IO to the same origin, rooms `block` and `mempool` (+ `address-transaction:<p>` and
 *    `address-stx-balance:<p>` for the watched principal), joined through the handshake query so that a resume
 *    replays all of them.
 *  - Every push message ends with a `{cursor}` argument. The last one is kept and sent back as `auth.cursor` on every
 *    reconnect: the server replays what was missed, then continues live. Rows are keyed by index block hash / tx id
 *    (and messages at or below the last cursor are ignored), so a resume never duplicates a row.
 *  - The initial state (and the state after a reconnect that has no cursor yet) comes from the REST API.
 *  - `reorg` (room `block`) marks the orphaned blocks; they stay in the list, struck through.
 */
(function () {
  'use strict';

  const MAX_BLOCKS = 20;
  const MAX_PENDING = 20;
  const MAX_ADDRESS_TXS = 50;
  const HISTORY_TXS = 10;
  const MAX_MEMPOOL_POINTS = 120;

  const $ = (id) => document.getElementById(id);

  /** Builds an element; children are nodes or strings (always text, never HTML). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('data-')) el.setAttribute(k, String(v));
      else if (k === 'title') el.title = String(v);
      else el.setAttribute(k, String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  const short = (hash) => (typeof hash === 'string' && hash.length > 18 ? `${hash.slice(0, 10)}…${hash.slice(-6)}` : String(hash ?? ''));

  function ago(seconds) {
    if (!Number.isFinite(seconds)) return '—';
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
    if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
    if (s < 86400 * 365) return `${Math.floor(s / 86400)}d`;
    return `${(s / (86400 * 365)).toFixed(1)}y`;
  }
  const now = () => Date.now() / 1000;

  /** micro-STX decimal string → "1,234.567890 STX" (exact, BigInt). */
  function stx(micro) {
    if (micro === undefined || micro === null || micro === '') return '—';
    let v;
    try {
      v = BigInt(micro);
    } catch {
      return String(micro);
    }
    const neg = v < 0n;
    if (neg) v = -v;
    const whole = (v / 1000000n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    const frac = (v % 1000000n).toString().padStart(6, '0');
    return `${neg ? '-' : ''}${whole}.${frac} STX`;
  }

  async function getJson(path) {
    const sent = Date.now();
    const res = await fetch(path, { headers: { accept: 'application/json' } });
    const body = await res.json().catch(() => null);
    if (res.status === 429) rateLimited(Number(res.headers.get('retry-after')), body && body.message);
    // only a request sent after the limit began ends it: the answer to one sent beside the refused one may come later
    else if (res.ok && sent >= limit.since) rateLimitOver();
    return { status: res.status, body };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // rate limits: a 429 from the API shows a banner with the retry time (the page itself is never rate limited);
  // when the time is up the REST snapshot is loaded again.

  const limit = { until: 0, timer: null, message: '', since: 0 };

  function rateLimited(retryAfterS, message) {
    const s = Number.isFinite(retryAfterS) && retryAfterS > 0 ? retryAfterS : 10;
    if (!limit.timer) limit.since = Date.now();
    limit.until = Math.max(limit.until, Date.now() + s * 1000);
    if (message) limit.message = String(message);
    renderRateLimit();
    if (!limit.timer) limit.timer = setInterval(renderRateLimit, 1000);
  }

  function rateLimitOver() {
    if (!limit.timer && $('rate-limit').hidden) return;
    clearInterval(limit.timer);
    limit.timer = null;
    limit.until = 0;
    $('rate-limit').hidden = true;
    $('tip-empty').textContent = TIP_WAITING;
  }

  const TIP_WAITING = 'Waiting for the first block…';

  function renderRateLimit() {
    const left = Math.ceil((limit.until - Date.now()) / 1000);
    const el = $('rate-limit');
    if (left <= 0) {
      rateLimitOver();
      void loadSnapshot();
      if (!socket.connected && !socket.active) socket.connect(); // a refused handshake is not retried by itself
      return;
    }
    el.hidden = false;
    el.textContent =
      `The API is rate limiting this browser (HTTP 429): some panels may be out of date. Retrying in ${left} s.` +
      (limit.message ? ` (${limit.message})` : '');
    el.dataset.retryIn = String(left);
    // an empty chain panel says why it is empty rather than waiting for a block it was refused
    $('tip-empty').textContent = `Not loaded: the API refused this browser (rate limited). Retrying in ${left} s…`;
    if (!socket.connected && !socket.active) setConn('error', 'rate limited');
  }

  // ---------------------------------------------------------------------------------------------------------------
  // state

  const state = {
    /** index_block_hash → { height, hash, indexHash, txCount, time, status: canonical|non-canonical|orphaned, seenAt } */
    blocks: new Map(),
    /** last push cursor received (decimal string) */
    cursor: null,
    connects: 0,
    /** cursor sent on the current connection, when it was a resume */
    resumedFrom: null,
    /** messages ignored because their cursor was not newer than the last one */
    duplicatesIgnored: 0,
    reorgs: [],
    /** tx_id → { tx, seenAt, minedAt: height | null } (insertion order = arrival order) */
    pending: new Map(),
    /** tx_id → block height, for txs mined in blocks we saw */
    mined: new Map(),
    stats: null,
    mempoolSeries: [],
    address: null,
    /** tx_id → { item: {tx, stx_sent, stx_received, stx_transfers}, source: 'history'|'push', updates } */
    addressTxs: new Map(),
    balance: null,
    balanceUpdates: 0,
    addressUpdates: 0,
  };

  // ---------------------------------------------------------------------------------------------------------------
  // connection

  const subscriptions = () => {
    const list = ['block', 'mempool'];
    if (state.address) list.push(`address-transaction:${state.address}`, `address-stx-balance:${state.address}`);
    return list.join(',');
  };

  if (typeof window.io !== 'function') {
    // /dashboard/vendor/socket.io.min.js did not load (socket.io-client not installed): say so instead of failing silently
    setConn('error', 'Socket.IO client not available (/dashboard/vendor/socket.io.min.js)');
    return;
  }

  const socket = io({
    autoConnect: false,
    path: '/socket.io/',
    query: { subscriptions: subscriptions() },
    // called on every (re)connection: resume from the last cursor when there is one
    auth: (cb) => {
      state.resumedFrom = state.cursor;
      cb(state.cursor ? { cursor: state.cursor } : {});
    },
  });

  /** The rooms of the handshake are read again on each reconnection (the manager builds a new engine). */
  function updateHandshakeRooms() {
    socket.io.opts.query = { subscriptions: subscriptions() };
  }

  function setConn(kind, text) {
    const el = $('conn');
    el.dataset.state = kind;
    el.textContent = text;
  }

  socket.on('connect', () => {
    state.connects++;
    if (state.resumedFrom) {
      setConn('resumed', `connected · resumed from cursor ${state.resumedFrom}`);
    } else {
      setConn('connected', 'connected');
      // nothing to resume from: (re)load the current state over REST
      if (state.connects > 1) void loadSnapshot();
    }
    scheduleStats();
  });
  socket.io.on('reconnect_attempt', (n) => setConn('reconnecting', `reconnecting… (attempt ${n})`));
  socket.on('disconnect', (reason) => {
    if (reason === 'io client disconnect') setConn('disconnected', 'disconnected');
    else setConn('reconnecting', `reconnecting… (${reason})`);
  });
  socket.on('connect_error', (err) => {
    const data = err && err.data;
    // the badge stays short (it sits in the header); the banner carries the server's whole message
    if (data && data.status === 429) {
      rateLimited(Number(data.headers && data.headers['retry-after']), err.message);
      setConn('error', 'rate limited');
      return;
    }
    const reason = String(err.message || 'error');
    const short = reason.length > 40 ? reason.slice(0, 39) + '…' : reason;
    const el = $('conn');
    el.title = reason;
    if (socket.active) setConn('reconnecting', `reconnecting… (${short})`);
    else setConn('error', `refused: ${short}`);
  });

  /** Strips the trailing {cursor} argument; null when the message was already seen. */
  function track(args) {
    const last = args[args.length - 1];
    const cursor = last && typeof last === 'object' && typeof last.cursor === 'string' ? last.cursor : null;
    if (!cursor) return args;
    if (state.cursor !== null && BigInt(cursor) <= BigInt(state.cursor)) {
      state.duplicatesIgnored++;
      return null;
    }
    state.cursor = cursor;
    $('cursor').textContent = `cursor ${cursor}`;
    return args.slice(0, -1);
  }

  socket.on('block', (...args) => {
    const a = track(args);
    if (!a) return;
    const b = a[0];
    upsertBlock({
      height: b.height,
      hash: b.hash,
      indexHash: b.index_block_hash,
      txCount: Array.isArray(b.txs) ? b.txs.length : 0,
      time: b.block_time || b.burn_block_time,
      burnHeight: b.burn_block_height,
      status: b.canonical ? 'canonical' : 'non-canonical',
      seenAt: now(),
    });
    for (const id of b.txs || []) {
      state.mined.set(id, b.height);
      const p = state.pending.get(id);
      if (p) p.minedAt = b.height;
    }
    if (state.mined.size > 5000) for (const k of [...state.mined.keys()].slice(0, 1000)) state.mined.delete(k);
    renderBlocks();
    renderPending();
    scheduleStats();
  });

  socket.on('reorg', (...args) => {
    const a = track(args);
    if (!a) return;
    const r = a[0] || {};
    const orphaned = Array.isArray(r.orphaned) ? r.orphaned : [];
    for (const ih of orphaned) {
      const b = state.blocks.get(ih);
      if (b) b.status = 'orphaned';
    }
    state.reorgs.push({ at: now(), orphaned: orphaned.length, newTip: r.new_tip && r.new_tip.height });
    const note = $('reorg-note');
    note.hidden = false;
    note.textContent = `Reorg: ${orphaned.length} block(s) orphaned, new tip #${r.new_tip ? r.new_tip.height : '?'}` +
      (state.reorgs.length > 1 ? ` (${state.reorgs.length} reorgs seen)` : '');
    renderBlocks();
    // the blocks of the new canonical fork were pushed as non-canonical when they arrived: ask REST which are canonical now
    void reconcileBlocks();
  });

  socket.on('mempool', (...args) => {
    const a = track(args);
    if (!a) return;
    addPending(a[0]);
    renderPending();
    scheduleStats();
  });

  socket.on('slow-consumer', (msg) => setConn('reconnecting', `reconnecting… (${msg})`));

  // address rooms: the event name is the room name
  socket.onAny((event, ...args) => {
    if (typeof event !== 'string') return;
    if (event.startsWith('address-transaction:')) {
      const a = track(args);
      if (!a) return;
      const [principal, item] = a;
      if (principal !== state.address || !item || !item.tx) return;
      upsertAddressTx(item, 'push');
      state.addressUpdates++;
      renderAddress();
    } else if (event.startsWith('address-stx-balance:')) {
      const a = track(args);
      if (!a) return;
      const [principal, balance] = a;
      if (principal !== state.address) return;
      state.balance = balance;
      state.balanceUpdates++;
      state.addressUpdates++;
      renderAddress();
    }
  });

  // ---------------------------------------------------------------------------------------------------------------
  // blocks and tip

  function upsertBlock(b) {
    const old = state.blocks.get(b.indexHash);
    // an orphaned block stays marked until a message says it is canonical again
    if (old && old.status === 'orphaned' && b.status !== 'canonical') b.status = 'orphaned';
    state.blocks.set(b.indexHash, { ...old, ...b, seenAt: old ? old.seenAt : b.seenAt });
  }

  /** Highest canonical blocks first; forks and orphans are kept beside the heights they compete for. */
  function visibleBlocks() {
    const all = [...state.blocks.values()].sort(
      (x, y) => y.height - x.height || rank(x.status) - rank(y.status) || (x.indexHash < y.indexHash ? -1 : 1),
    );
    const canonical = all.filter((b) => b.status === 'canonical');
    const floor = canonical.length >= MAX_BLOCKS ? canonical[MAX_BLOCKS - 1].height : -Infinity;
    const shown = all.filter((b) => b.height >= floor);
    // bound memory: forget what scrolled out
    for (const b of all) if (b.height < floor) state.blocks.delete(b.indexHash);
    return shown;
  }
  const rank = (s) => (s === 'canonical' ? 0 : s === 'non-canonical' ? 1 : 2);

  function tipBlock() {
    let tip = null;
    for (const b of state.blocks.values()) if (b.status === 'canonical' && (!tip || b.height > tip.height)) tip = b;
    return tip;
  }

  function renderBlocks() {
    const rows = visibleBlocks();
    const tbody = $('blocks');
    tbody.replaceChildren(
      ...rows.map((b) =>
        h(
          'tr',
          {
            class: `block ${b.status}`,
            'data-height': b.height,
            'data-hash': b.hash,
            'data-index-block-hash': b.indexHash,
            'data-state': b.status,
            title: `index block hash ${b.indexHash}`,
          },
          h('td', { class: 'num' }, `#${b.height}`),
          h('td', { class: 'mono' }, short(b.hash)),
          h('td', { class: 'num tx-count' }, b.txCount),
          h('td', { class: 'age', 'data-time': b.time }, ago(now() - b.time)),
          h('td', {}, b.status === 'canonical' ? '' : h('span', { class: `tag ${b.status}` }, b.status)),
        ),
      ),
    );
    $('blocks-empty').hidden = rows.length > 0;
    renderTip();
    updateTxChart();
  }

  function renderTip() {
    const t = tipBlock();
    $('tip-empty').hidden = !!t;
    $('tip-height').textContent = t ? String(t.height) : '—';
    $('tip-hash').textContent = t ? t.hash : '—';
    $('tip-hash').title = t ? `index block hash ${t.indexHash}` : '';
    $('tip-burn-height').textContent = t && t.burnHeight !== undefined ? String(t.burnHeight) : '—';
    renderAges();
  }

  function renderAges() {
    const t = tipBlock();
    $('tip-age').textContent = t ? `${ago(now() - t.time)} (received ${ago(now() - t.seenAt)} ago)` : '—';
    for (const td of document.querySelectorAll('td.age[data-time]')) td.textContent = ago(now() - Number(td.dataset.time));
    for (const el of document.querySelectorAll('.since[data-since]')) el.textContent = `${ago(now() - Number(el.dataset.since))} ago`;
  }

  function fromV2(b) {
    return {
      height: b.height,
      hash: b.hash,
      indexHash: b.index_block_hash,
      txCount: b.tx_count,
      time: b.block_time || b.burn_block_time,
      burnHeight: b.burn_block_height,
      status: b.canonical ? 'canonical' : 'non-canonical',
      seenAt: now(),
    };
  }

  /** After a reorg: the REST view of the last blocks decides which of ours are canonical. */
  async function reconcileBlocks() {
    const r = await getJson(`/extended/v2/blocks?limit=${MAX_BLOCKS}`).catch(() => null);
    if (!r || r.status !== 200 || !r.body || !Array.isArray(r.body.results)) return;
    const canonical = new Set();
    for (const b of r.body.results) {
      canonical.add(b.index_block_hash);
      upsertBlock({ ...fromV2(b), status: 'canonical' });
    }
    const heights = r.body.results.map((b) => b.height);
    const min = Math.min(...heights);
    const max = Math.max(...heights);
    // only within the answer's range: a block pushed after the answer was computed is newer than its top
    for (const b of state.blocks.values()) {
      if (b.height >= min && b.height <= max && !canonical.has(b.indexHash) && b.status === 'canonical') b.status = 'orphaned';
    }
    renderBlocks();
  }

  $('blocks').addEventListener('click', (ev) => {
    const tr = ev.target instanceof Element ? ev.target.closest('tr[data-hash]') : null;
    if (tr) void showBlock(tr.dataset.hash, tr.dataset.indexBlockHash, tr.dataset.state);
  });

  async function showBlock(hash, indexHash, status) {
    const panel = $('detail-panel');
    panel.hidden = false;
    $('detail-title').textContent = hash;
    $('block-json').textContent = 'loading…';
    // v2 answers for canonical blocks only: an orphaned or fork block is looked up with v1, which knows them all
    const source = status === 'canonical' ? `/extended/v2/blocks/${hash}` : `/extended/v1/block/${hash}`;
    const r = await getJson(source).catch((e) => ({ status: 0, body: String(e) }));
    $('block-json').dataset.hash = hash;
    $('block-json').dataset.status = String(r.status);
    $('block-json').textContent =
      `// GET ${source} → ${r.status}${status && status !== 'canonical' ? ` (${status} block ${indexHash})` : ''}\n` +
      JSON.stringify(r.body, null, 2);
  }
  $('detail-close').addEventListener('click', () => {
    $('detail-panel').hidden = true;
  });

  // ---------------------------------------------------------------------------------------------------------------
  // mempool

  function addPending(tx) {
    if (!tx || !tx.tx_id) return;
    const old = state.pending.get(tx.tx_id);
    if (old) {
      old.tx = tx;
      return;
    }
    state.pending.set(tx.tx_id, { tx, seenAt: now(), minedAt: state.mined.get(tx.tx_id) ?? null });
    if (state.pending.size > 200) state.pending.delete(state.pending.keys().next().value);
  }

  function renderPending() {
    const items = [...state.pending.values()].reverse().slice(0, MAX_PENDING);
    $('mempool-txs').replaceChildren(
      ...items.map((p) =>
        h(
          'li',
          { class: p.minedAt !== null ? 'tx mined' : 'tx', 'data-tx-id': p.tx.tx_id },
          h('span', { class: 'type' }, p.tx.tx_type),
          h('span', { class: 'mono', title: p.tx.tx_id }, short(p.tx.tx_id)),
          h('span', { class: 'mono muted', title: p.tx.sender_address }, short(p.tx.sender_address)),
          h('span', { class: 'muted' }, `fee ${stx(p.tx.fee_rate)}`),
          p.minedAt !== null ? h('span', { class: 'tag mined' }, `mined #${p.minedAt}`) : h('span', { class: 'since muted', 'data-since': p.seenAt }, ''),
        ),
      ),
    );
    $('mempool-empty').hidden = items.length > 0;
    renderAges();
  }

  let statsTimer = null;
  let statsBusy = false;
  let statsAgain = false;
  /** mempool stats after each mempool/block message, coalesced (one request in flight, one queued) */
  function scheduleStats() {
    if (statsTimer) return;
    statsTimer = setTimeout(async () => {
      statsTimer = null;
      if (statsBusy) {
        statsAgain = true;
        return;
      }
      statsBusy = true;
      try {
        const r = await getJson('/extended/v1/tx/mempool/stats');
        if (r.status === 200 && r.body) {
          state.stats = r.body;
          renderStats();
        }
      } catch {
        /* shown as stale; the next message retries */
      } finally {
        statsBusy = false;
        if (statsAgain) {
          statsAgain = false;
          scheduleStats();
        }
      }
    }, 150);
  }

  function renderStats() {
    const counts = (state.stats && state.stats.tx_type_counts) || {};
    const types = Object.keys(counts);
    const total = types.reduce((s, k) => s + (Number(counts[k]) || 0), 0);
    $('mempool-total').textContent = String(total);
    $('mempool-counts').replaceChildren(
      ...types.map((k) => h('tr', { 'data-type': k }, h('td', {}, k), h('td', { class: 'num' }, counts[k]))),
    );
    state.mempoolSeries.push({ t: new Date(), total });
    if (state.mempoolSeries.length > MAX_MEMPOOL_POINTS) state.mempoolSeries.shift();
    updateMempoolChart();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // charts (Chart.js UMD, global `Chart`)

  const charts = {};
  const C = typeof window.Chart === 'function' ? window.Chart : null;
  if (C) {
    C.defaults.color = '#9aa4b2';
    C.defaults.borderColor = 'rgba(154,164,178,0.15)';
    const common = {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: { legend: { labels: { boxWidth: 12 } } },
    };
    charts.txs = new C($('chart-txs'), {
      type: 'bar',
      data: { labels: [], datasets: [{ label: 'transactions per block', data: [], backgroundColor: '#5b8def' }] },
      options: { ...common, scales: { x: { ticks: { maxRotation: 0, autoSkipPadding: 8 } }, y: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
    charts.mempool = new C($('chart-mempool'), {
      type: 'line',
      data: {
        labels: [],
        datasets: [{ label: 'mempool size', data: [], borderColor: '#f5a524', backgroundColor: 'rgba(245,165,36,0.2)', fill: true, stepped: true, pointRadius: 2 }],
      },
      options: { ...common, scales: { x: { ticks: { maxRotation: 0, maxTicksLimit: 5 } }, y: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
  }

  function updateTxChart() {
    if (!charts.txs) return;
    const blocks = [...state.blocks.values()].filter((b) => b.status === 'canonical').sort((x, y) => x.height - y.height).slice(-MAX_BLOCKS);
    charts.txs.data.labels = blocks.map((b) => `#${b.height}`);
    charts.txs.data.datasets[0].data = blocks.map((b) => b.txCount);
    charts.txs.update();
  }

  function updateMempoolChart() {
    if (!charts.mempool) return;
    charts.mempool.data.labels = state.mempoolSeries.map((p) => p.t.toLocaleTimeString([], { hour12: false }));
    charts.mempool.data.datasets[0].data = state.mempoolSeries.map((p) => p.total);
    charts.mempool.update();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // address watch

  function upsertAddressTx(item, source) {
    const id = item.tx.tx_id;
    const old = state.addressTxs.get(id);
    state.addressTxs.set(id, {
      item,
      source: old && source === 'history' ? old.source : source,
      updates: (old ? old.updates : 0) + (source === 'push' ? 1 : 0),
      seenAt: old ? old.seenAt : now(),
    });
  }

  function renderAddress() {
    const box = $('watch-balance');
    box.hidden = !state.address;
    const b = state.balance;
    $('watch-balance-value').textContent = b ? stx(b.balance) : '—';
    $('watch-balance-value').title = b ? JSON.stringify(b) : '';
    $('watch-balance-updates').textContent = state.address
      ? `${state.balanceUpdates} balance update(s), ${state.addressUpdates} live update(s)`
      : '';
    const rows = [...state.addressTxs.values()].sort(
      (x, y) => (y.item.tx.block_height ?? 0) - (x.item.tx.block_height ?? 0) || (y.item.tx.tx_index ?? 0) - (x.item.tx.tx_index ?? 0),
    );
    for (const r of rows.slice(MAX_ADDRESS_TXS)) state.addressTxs.delete(r.item.tx.tx_id);
    $('watch-txs').replaceChildren(
      ...rows.slice(0, MAX_ADDRESS_TXS).map(({ item, source, updates }) => {
        const tx = item.tx;
        const flow = [];
        if (item.stx_received && item.stx_received !== '0') flow.push(h('span', { class: 'in' }, `+${stx(item.stx_received)}`));
        if (item.stx_sent && item.stx_sent !== '0') flow.push(h('span', { class: 'out' }, `−${stx(item.stx_sent)}`));
        return h(
          'li',
          { class: `tx ${source}${tx.canonical === false ? ' orphaned' : ''}`, 'data-tx-id': tx.tx_id, 'data-source': source },
          h('span', { class: 'type' }, tx.tx_type),
          h('span', { class: 'mono', title: tx.tx_id }, short(tx.tx_id)),
          h('span', { class: 'muted' }, tx.tx_status, tx.block_height ? ` · #${tx.block_height}` : ''),
          ...flow,
          source === 'push' ? h('span', { class: 'tag live' }, updates > 1 ? `live ×${updates}` : 'live') : null,
        );
      }),
    );
  }

  async function watch(address) {
    const addr = String(address || '').trim();
    if (!addr || addr === state.address) return;
    const status = $('watch-status');
    if (state.address) socket.emit('unsubscribe', `address-transaction:${state.address}`, `address-stx-balance:${state.address}`);
    state.address = addr;
    state.addressTxs.clear();
    state.balance = null;
    state.balanceUpdates = 0;
    state.addressUpdates = 0;
    updateHandshakeRooms();
    renderAddress();
    status.textContent = `Watching ${addr}…`;
    status.className = 'muted';
    if (location.hash !== `#address=${addr}`) history.replaceState(null, '', `#address=${addr}`);

    const fail = (msg) => {
      if (state.address !== addr) return;
      state.address = null;
      updateHandshakeRooms();
      socket.emit('unsubscribe', `address-transaction:${addr}`, `address-stx-balance:${addr}`);
      status.textContent = msg;
      status.className = 'warn';
      renderAddress();
    };
    for (const room of [`address-transaction:${addr}`, `address-stx-balance:${addr}`]) {
      socket.emit('subscribe', room, (err) => {
        if (err) fail(String(err));
      });
    }
    // recent history: the txs of the principal's latest asset events (the API has no address tx list), each
    // fetched in the push payload's shape; older or event-less txs are not shown, new ones arrive live
    const [events, bal] = await Promise.all([
      getJson(`/extended/v1/tx/events?address=${encodeURIComponent(addr)}&limit=50`),
      getJson(`/extended/v1/address/${encodeURIComponent(addr)}/stx`),
    ]).catch((e) => [{ status: 0, body: { error: String(e) } }, null]);
    if (state.address !== addr) return;
    if (events.status !== 200) {
      fail(`Cannot watch ${addr}: ${(events.body && (events.body.message || events.body.error)) || `HTTP ${events.status}`}`);
      return;
    }
    const ids = [...new Set((events.body.results || []).map((e) => e.tx_id).filter(Boolean))].slice(0, HISTORY_TXS);
    const items = await Promise.all(
      ids.map((id) => getJson(`/extended/v1/address/${encodeURIComponent(addr)}/${id}/with_transfers`).catch(() => null)),
    );
    if (state.address !== addr) return;
    let n = 0;
    for (const r of items) {
      // a tx pushed meanwhile is newer than this answer: keep it
      if (r && r.status === 200 && r.body && r.body.tx && !state.addressTxs.has(r.body.tx.tx_id)) {
        upsertAddressTx(r.body, 'history');
        n++;
      }
    }
    if (bal && bal.status === 200 && !state.balance) state.balance = bal.body;
    status.textContent = `Watching ${addr}: ${n} recent transaction(s) loaded; new ones appear live.`;
    renderAddress();
  }

  $('watch-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void watch($('watch-input').value);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // start

  async function loadSnapshot() {
    const [blocks, pending] = await Promise.all([
      getJson(`/extended/v2/blocks?limit=${MAX_BLOCKS}`).catch(() => null),
      getJson(`/extended/v1/tx/mempool?limit=${MAX_PENDING}`).catch(() => null),
    ]);
    if (blocks && blocks.status === 200 && Array.isArray(blocks.body.results)) {
      for (const b of blocks.body.results) {
        const old = state.blocks.get(b.index_block_hash);
        // keep a live block's arrival time; never un-orphan from a snapshot that may predate the reorg
        if (!old) upsertBlock(fromV2(b));
      }
    }
    if (pending && pending.status === 200 && Array.isArray(pending.body.results)) {
      // oldest first, so that the newest ends up on top
      for (const tx of [...pending.body.results].reverse()) if (!state.pending.has(tx.tx_id)) addPending(tx);
    }
    renderBlocks();
    renderPending();
    scheduleStats();
  }

  setInterval(renderAges, 1000);
  renderBlocks();
  renderPending();
  renderAddress();
  void loadSnapshot();
  socket.connect();

  const fromHash = /^#address=(.+)$/.exec(location.hash);
  if (fromHash) {
    $('watch-input').value = decodeURIComponent(fromHash[1]);
    void watch(decodeURIComponent(fromHash[1]));
  }

  // a handle for tests and curious people (window.dashboard.socket, .state, .watch)
  window.dashboard = { socket, state, watch };
})();
