/* Hall scoreboard: every table of the hall, live over Server-Sent Events (no external requests). */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const STALE_MS = 15000;  // the server sends the tables at least every 5 s
  let lastMessage = Date.now();
  // the hall as the server last told it: its head (name, broker link, drops) and each table's card with the moment
  // it came (for "updated … ago"); the whole list on (re)connecting, then only the tables that changed
  let head = null;
  const cards = new Map();
  let source = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c.nodeType ? c : String(c));
    return node;
  }

  function ago(seconds) {
    if (seconds < 60) return Math.round(seconds) + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    return Math.round(seconds / 3600) + " h ago";
  }

  function fmt(n) {
    return typeof n === "number" ? (Number.isInteger(n) ? String(n) : n.toFixed(1)) : "–";
  }

  // a finished game's outcome in the table page's words; a table whose state names no winners at all (older
  // software) is only said to be over, never called a draw
  function result(t) {
    const won = t.winners;
    if (!Array.isArray(won)) return "Game over";
    if (!won.length) return "A draw";
    return won.join(" and ") + (won.length > 1 ? " win" : " wins");
  }

  function card(t, extra) {
    const online = t.online === true ? "online" : t.online === false ? "offline" : "unknown";
    const badge = { online: "online", offline: "offline", unknown: "no status" }[online];
    const won = (t.over && t.winners) || [];
    const scores = el("table", { class: "scores" },
      (t.scores || []).map((s) => el("tr", { class: t.to_move && s.name === t.to_move ? "hall-turn" : null },
        // the score alone can point the wrong way (a tip decides Balance Duels): mark who won, as the table page does
        el("td", {}, s.name, won.includes(s.name) ? el("b", { class: "won" }, " · won") : null),
        el("td", { class: "num" }, fmt(s.score)))));
    const parts = [
      el("div", { class: "hall-head" }, el("h2", {}, t.name || t.table), el("span", { class: "hall-badge hall-" + online }, badge)),
      el("div", { class: "hall-game" }, t.title || "no game yet"),
      t.over ? el("div", { class: "hall-result" }, result(t)) : null,
      el("div", { class: "hall-message" }, t.message || ""),
      scores,
    ];
    const b = t.balance;
    if (b) {
      parts.push(el("div", { class: "hall-balance" },
        el("span", {}, "torque ", el("b", {}, fmt(b.net_torque)), " g·mm"),
        el("span", {}, "margin ", el("b", {}, fmt(b.margin)), " g·mm"),
        b.tipped ? el("span", { class: "hall-tipped" }, (b.tipped_by || "someone") + " tipped the arm") : null));
    }
    parts.push(el("div", { class: "small" }, "table " + t.table + " · updated " + ago(t.updated_s_ago + extra)));
    // hall- class names: the table page's style.css has its own .offline (a banner) and .turn (a pill)
    return el("article", { class: "card hall-card hall-" + online + (t.over ? " hall-over" : ""), "data-table": t.table }, parts);
  }

  function take(data, whole) {
    const now = Date.now();
    if (whole) cards.clear();
    for (const id of data.removed || []) cards.delete(id);
    for (const t of data.tables || []) cards.set(t.table, { t, at: now });
    head = data;
  }

  function render() {
    if (!head) return;
    const data = head;
    $("title").textContent = "Hall " + data.hall;
    document.title = "Hall " + data.hall + " · scoreboard";
    const ids = [...cards.keys()].sort();
    const online = ids.filter((id) => cards.get(id).t.online === true).length;
    // the hall keeps a bounded number of cards (a flood of retained tables must not grow the page): say how many went
    const dropped = (data.dropped && data.dropped.tables) || 0;
    const more = dropped ? `; ${dropped} more dropped past the hall's limit` : "";
    $("summary").textContent = ids.length ? `${ids.length} table${ids.length === 1 ? "" : "s"}, ${online} online${more}` : "";
    $("empty").hidden = ids.length > 0;
    const now = Date.now();
    $("tables").replaceChildren(...ids.map((id) => { const c = cards.get(id); return card(c.t, (now - c.at) / 1000); }));
    const br = data.broker || {};
    const ok = br.state === "connected";
    const b = $("broker");
    b.textContent = ok ? "broker ok" : "broker " + (br.state || "?");
    b.title = br.address + (br.last_error ? " — " + br.last_error : "");
    b.className = "conn " + (ok ? "ok" : "bad");
    const banner = $("banner");
    banner.hidden = ok;
    if (!ok) banner.textContent = "No link to the broker at " + br.address + (br.last_error ? ": " + br.last_error : "") +
      ". The scores shown may be old; retrying.";
  }

  function setConn(ok) {
    const c = $("conn");
    c.textContent = ok ? "live" : "reconnecting…";
    c.className = "conn " + (ok ? "ok" : "bad");
  }

  function connect() {
    if (source) source.close();
    source = new EventSource("/api/stream");
    const listen = (name, whole) => source.addEventListener(name, (ev) => {
      lastMessage = Date.now();
      setConn(true);
      try { take(JSON.parse(ev.data), whole); render(); }
      catch (e) { $("banner").textContent = "bad data from the hall server: " + e.message; $("banner").hidden = false; }
    });
    listen("tables", true);      // the whole list: on (re)connecting
    listen("changes", false);    // then what changed: the tables' new cards, the ids gone
    source.onerror = () => {
      setConn(false);
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
    };
  }

  // a stream can die silently (a Wi-Fi hiccup): notice the silence and reconnect
  setInterval(() => {
    if (Date.now() - lastMessage > STALE_MS) { setConn(false); lastMessage = Date.now(); connect(); }
    render();
  }, 1000);

  fetch("/api/tables").then((r) => r.json()).then((data) => { take(data, true); render(); })
    .catch(() => setConn(false)).finally(connect);
})();
