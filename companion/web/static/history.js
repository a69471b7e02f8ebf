/* The history view of the table page: the plays newest first (filtered by game, player, date), a play's final
   standing, its score and (Balance Duels) the arm's torque over the game, the players' and games' figures and
   the skill ratings. Drawn by the page itself (SVG and HTML), every request to the daemon only. Loaded by
   nights.js the first time History is opened. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#e8e8e8", "#ffd400", "#ff5c5c", "#4aa8ff", "#b48cff", "#5ce1b0"];
  const COLOUR_CSS = { black: "#111111", white: "#f4f6f8", red: "#e23b3b", blue: "#2f7de1", yellow: "#ffd400",
    green: "#1f9d55", purple: "#9b5de5", orange: "#ff8c1a", grey: "#8a8f98", gray: "#8a8f98", pink: "#ff6fb5", brown: "#8b5a2b" };
  const DASHES = [null, "10 5", "3 4", "14 4 3 4", "6 6", "2 6"];
  const PAGE = 50;

  function el(tag, attrs, ...children) {
    const node = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.setAttribute("class", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c.nodeType ? c : String(c));
    return node;
  }
  const colour = (c, i) => COLOUR_CSS[String(c || "").toLowerCase()] || PALETTE[i % PALETTE.length];
  function mark(p, i) {
    const name = p.name || "?";
    return el("span", { class: "swatch mark hist-mark", "aria-hidden": "true", "data-colour": colour(p.colour, i) }, name.slice(0, 1).toUpperCase());
  }
  function paint(root) {
    // colours through CSSOM (the page's policy allows no inline style attribute)
    root.querySelectorAll("[data-colour]").forEach((n) => {
      const c = n.getAttribute("data-colour");
      n.style.background = c;
      n.style.color = ["#111111", "#2f7de1", "#1f9d55", "#9b5de5", "#8b5a2b", "#e23b3b"].includes(c) ? "#fff" : "#000";
    });
  }

  async function get(path) {
    for (let tries = 0; ; tries++) {
      const r = await fetch(path, { credentials: "same-origin" });
      const data = await r.json().catch(() => ({ error: r.statusText }));
      if (r.status === 503 && data.building && tries < 600) {
        status(`The history is being built: ${data.building.done} of ${data.building.total} games read…`);
        await new Promise((ok) => setTimeout(ok, 1000));
        continue;
      }
      if (!r.ok) throw new Error(data.error || r.statusText);
      status("");
      return data;
    }
  }
  function status(text) { const s = $("hist-status"); if (s) { s.textContent = text; s.hidden = !text; } }
  const api = () => window.companionApi;

  // ---------------------------------------------------------------- times and figures, said plainly
  function when(t) {
    if (!t || !t.at) return { text: "time not known", note: "these events were written before the companion kept clock stamps" };
    const d = new Date(t.at);
    const text = d.toLocaleString([], { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
    if (t.quality === "synced") return { text, note: null };
    if (t.quality === "worked_back") return { text, note: "worked back from when the Pi's clock was set that night" };
    if (t.quality === "unsynced") return { text, note: "the Pi's clock was not set (no time server): the date may be wrong" };
    return { text, note: "the companion cannot tell whether the Pi's clock was set" };
  }
  function whenNode(t) {
    const w = when(t);
    const short = { worked_back: "clock set later that night", unsynced: "Pi's clock not set", unknown: "clock not known" }[t && t.quality] || "time not known";
    return el("span", { class: "hist-when" }, w.text, w.note ? el("span", { class: "hist-doubt", title: w.note }, ` (${short})`) : null);
  }
  function duration(s) {
    if (s === null || s === undefined) return "length not known";
    const m = Math.round(s / 60);
    return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
  }
  const pct = (x) => (x === null || x === undefined ? "–" : `${Math.round(x * 100)} %`);
  const num = (x) => (x === null || x === undefined ? "–" : String(Math.round(x * 10) / 10));

  // ---------------------------------------------------------------- the view's frame
  let games = [];
  let tab = "plays";
  const filters = { game: "", player: "", since: "", until: "", status: "all" };
  let shown = [];
  let total = 0;
  // each drawing of the body takes a number: an answer that comes back after a later filter or tab was chosen is
  // dropped, so a slow request never paints over the newer one
  let drawing = 0;
  function turn() { const mine = ++drawing; return () => mine === drawing; }

  function frame() {
    let root = $("history");
    if (!root) {
      root = el("section", { id: "history", class: "history", "aria-label": "history" });
      document.querySelector("main").after(root);
    }
    const tabs = [["plays", "Plays"], ["players", "Players"], ["games", "Games"], ["ratings", "Ratings"]];
    root.replaceChildren(
      el("div", { class: "hist-top" },
        el("h2", { class: "hist-title" }, "Game nights"),
        el("div", { class: "hist-tabs", role: "tablist", "aria-label": "history views" },
          tabs.map(([k, label]) => el("button", { class: "btn hist-tab" + (k === tab ? " primary" : ""), type: "button", role: "tab",
            "aria-selected": String(k === tab), "data-tab": k, onclick: () => { tab = k; show(); } }, label)))),
      el("p", { id: "hist-status", class: "hist-status", role: "status", hidden: true }),
      el("div", { id: "hist-body", class: "hist-body" }));
    return root;
  }

  async function open() {
    document.body.classList.add("history-open");
    $("btn-history").textContent = "Back to the game";
    frame().hidden = false;
    if (!games.length) games = await get("/api/games").catch(() => []);
    show();
    window.scrollTo(0, 0);
  }
  function close() {
    document.body.classList.remove("history-open");
    $("btn-history").textContent = "History";
    const root = $("history");
    if (root) root.hidden = true;
  }
  function show() {
    frame();
    const views = { plays: showPlays, players: showPlayers, games: showGames, ratings: showRatings };
    const before = drawing;
    views[tab]().catch((e) => { if (drawing === before + 1) $("hist-body").replaceChildren(el("p", { class: "error", role: "alert" }, e.message)); });
  }
  const gameSelect = (value, all, onchange, label) => el("select", { class: "hist-input", "aria-label": label, onchange },
    all ? el("option", { value: "" }, "All games") : null,
    games.map((g) => el("option", { value: g.name, selected: g.name === value }, g.title)));

  // ---------------------------------------------------------------- plays
  function query(offset) {
    const q = new URLSearchParams({ limit: PAGE, offset });
    if (filters.game) q.set("game", filters.game);
    if (filters.player.trim()) q.set("player", filters.player.trim().slice(0, 24));
    if (filters.status !== "all") q.set("status", filters.status);
    // the dates as the tablet's own midnights
    if (filters.since) q.set("since", new Date(filters.since + "T00:00:00").toISOString());
    if (filters.until) { const d = new Date(filters.until + "T00:00:00"); d.setDate(d.getDate() + 1); q.set("until", d.toISOString()); }
    return "/api/plays?" + q.toString();
  }
  function exportLink(format, text) {
    // the plays the filters show, every one of them (up to the export's 10,000), times in the tablet's zone
    const q = new URLSearchParams(query(0).split("?")[1]);
    q.delete("limit"); q.delete("offset");
    q.set("format", format);
    const zone = (Intl.DateTimeFormat().resolvedOptions() || {}).timeZone;
    if (zone && /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+){0,2}$/.test(zone)) q.set("tz", zone);
    return el("a", { class: "btn", href: "/api/plays/export?" + q.toString(), download: "", "data-export": format }, text);
  }
  // the filters are built once and kept while the plays under them are redrawn: a redraw that rebuilt them would drop
  // what someone is typing into the player box while an earlier answer comes in
  function filterForm(body) {
    let form = body.querySelector(".hist-filters");
    if (form) return form;
    const change = (k) => (ev) => { filters[k] = ev.target.value; showPlays(); };
    form = el("div", { class: "hist-filters" },
      el("label", {}, "Game ", gameSelect(filters.game, true, change("game"), "game")),
      el("label", {}, "Player ", el("input", { class: "hist-input", type: "search", list: "hist-names", maxlength: 24, value: filters.player,
        placeholder: "anyone", onchange: change("player") }),
      el("datalist", { id: "hist-names" })),
      el("label", {}, "From ", el("input", { class: "hist-input", type: "date", value: filters.since, onchange: change("since") })),
      el("label", {}, "To ", el("input", { class: "hist-input", type: "date", value: filters.until, onchange: change("until") })),
      el("label", {}, "Show ", el("select", { class: "hist-input", onchange: change("status") },
        [["all", "every play"], ["finished", "finished"], ["unfinished", "unfinished"]].map(([v, t]) => el("option", { value: v, selected: v === filters.status }, t)))));
    body.replaceChildren(form, el("div", { id: "hist-results" }));
    return form;
  }
  async function showPlays() {
    const current = turn();
    const body = $("hist-body");
    const form = filterForm(body);
    const people = await get("/api/people?limit=200").catch(() => ({ people: [] }));
    if (!current()) return;
    form.querySelector("#hist-names").replaceChildren(...people.people.map((p) => el("option", { value: p.name })));
    const page = await get(query(0));
    if (!current()) return;
    shown = page.plays;
    total = page.total;
    const list = el("ol", { class: "hist-plays", id: "hist-plays" }, shown.map(playRow));
    const more = el("button", { class: "btn", type: "button", id: "hist-more", hidden: shown.length >= total, onclick: async () => {
      const next = await get(query(shown.length));
      shown = shown.concat(next.plays);
      next.plays.forEach((p) => list.append(playRow(p)));
      paint(list);
      more.hidden = shown.length >= next.total;
      count.textContent = `${shown.length} of ${next.total} plays`;
    } }, "Show more");
    const count = el("p", { class: "small" }, total ? `${shown.length} of ${total} plays` : "No plays match.");
    const download = total ? el("p", { class: "hist-export" }, "Download these plays: ", exportLink("csv", "CSV"), " ",
      exportLink("bgstats", "BG Stats")) : null;
    const results = $("hist-results");
    results.replaceChildren(count, list, more, download || "");
    paint(results);
  }
  function playRow(p) {
    const who = p.players.map((x, i) => el("span", { class: "hist-who" + (x.winner ? " won" : "") }, mark(x, i), " ", x.name,
      x.guest ? el("span", { class: "small" }, " (guest)") : null,
      x.score !== null && x.score !== undefined ? el("b", { class: "hist-score" }, ` ${x.score}`) : null, x.winner ? " ★" : null));
    const ended = p.over ? (p.ended ? p.ended.text : "over") : "unfinished";
    return el("li", {}, el("button", { class: "hist-play", type: "button", "data-play": p.id, onclick: () => showPlay(p.id) },
      el("span", { class: "hist-line" }, el("b", {}, p.title), " · ", whenNode(p.start),
        p.current ? el("span", { class: "badge now" }, "now playing") : null,
        !p.over ? el("span", { class: "badge open" }, "unfinished") : null),
      el("span", { class: "hist-line hist-players" }, who),
      el("span", { class: "hist-line small" }, `${ended} · ${p.turns} turns · ${duration(p.played_s)}`)));
  }

  async function showPlay(id) {
    const current = turn();
    const p = await get(`/api/plays/${id}`);
    if (!current()) return;
    const body = $("hist-body");
    const standing = [...p.players].sort((a, b) => (a.rank || 99) - (b.rank || 99) || a.seat - b.seat);
    const facts = [
      ["How it ended", p.over ? (p.ended ? p.ended.text : "over") : "not finished: it can be resumed"],
      ["Turns", String(p.turns)],
      ["Played", duration(p.played_s) + (p.breaks ? ` (${p.breaks} break${p.breaks > 1 ? "s" : ""} not counted)` : "")],
      ["Started", whenNode(p.start)], ["Last event", whenNode(p.end)],
    ];
    const variant = Object.entries(p.variant || {});
    if (variant.length) facts.push(["Rules", variant.map(([k, v]) => `${k.replace(/_/g, " ")}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ")]);
    if (p.parts.length > 1) facts.push(["Resumed", `from play ${p.parts.slice(0, -1).join(", ")}`]);
    const resume = !p.over && !p.current && !p.problem ? el("button", { class: "btn primary", type: "button", id: "hist-resume", onclick: async () => {
      try { await api().post(`/api/plays/${p.id}/resume`, {}); close(); }
      catch (e) { note.textContent = e.message; }
    } }, "Resume this game") : null;
    const note = el("p", { class: "error", role: "alert" });
    const tips = (p.extra && p.extra.tips) || [];
    body.replaceChildren(
      el("button", { class: "btn", type: "button", id: "hist-list", onclick: showPlays }, "← All plays"),
      el("article", { class: "card hist-detail", "aria-label": `play ${p.id}` },
        el("h3", { class: "hist-h" }, `${p.title} · `, whenNode(p.start), p.current ? el("span", { class: "badge now" }, "now playing") : null),
        el("div", { class: "hist-cols" },
          el("div", {},
            el("table", { class: "hist-table", id: "hist-standing" },
              el("caption", { class: "small" }, p.over ? "Final standing" : "Standing when it was left"),
              el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Place"), el("th", { scope: "col" }, "Player"), el("th", { scope: "col", class: "num" }, "Score"))),
              el("tbody", {}, standing.map((x) => el("tr", { class: x.winner ? "won" : null },
                el("td", {}, x.rank ? String(x.rank) : "–"),
                el("td", {}, mark(x, x.seat - 1), " ", x.name, x.winner ? " ★ won" : "", x.role ? el("span", { class: "small" }, ` (${x.role})`) : null),
                el("td", { class: "num" }, x.score === null || x.score === undefined ? "hidden" : String(x.score)))))),
            el("dl", { class: "hist-facts" }, facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
            tips.length ? el("p", { class: "small" }, "Tips: " + tips.map((t) => `${t.name} on ${t.holder || "?"}`).join(", ")) : null,
            resume, note),
          el("div", { class: "hist-charts" },
            p.score_series && p.score_series.length > 1 ? scoreChart(p.score_series, p.players) : null,
            p.torque_series && p.torque_series.length > 1 ? torqueChart(p.torque_series, p.tip_torque) : null))));
    paint(body);
    window.scrollTo(0, 0);
  }

  // ---------------------------------------------------------------- charts that read from across a table
  const W = 640, H = 300, L = 84, R = 112, T = 16, B = 44;
  function axes(svg, yMin, yMax, steps, label) {
    const y = (v) => T + (H - T - B) * (1 - (v - yMin) / (yMax - yMin || 1));
    for (let i = 0; i <= steps; i++) {
      const v = yMin + ((yMax - yMin) * i) / steps;
      svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "hist-gridline" }),
        el("svg:text", { x: L - 8, y: y(v) + 8, "text-anchor": "end", class: "hist-tick" },
          Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(1)}k` : String(Math.round(v))));
    }
    svg.append(el("svg:text", { x: L, y: H - 10, class: "hist-tick" }, label));
    return y;
  }
  function scoreChart(series, players) {
    const names = players.map((p) => p.typed);
    let max = 1;
    for (const pt of series) for (const n of names) if (typeof pt[n] === "number") max = Math.max(max, pt[n]);
    const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "hist-chart", role: "img", "aria-label": "score over the game: " +
      players.map((p) => `${p.name} ${p.score === null ? "hidden" : p.score}`).join(", ") });
    const y = axes(svg, 0, max, Math.min(5, max), "score over the game (each point an action) →");
    const x = (k) => L + ((W - L - R) * k) / (series.length - 1);
    players.forEach((p, i) => {
      const runs = [[]];
      series.forEach((pt, k) => {
        if (typeof pt[p.typed] !== "number") { if (runs[runs.length - 1].length) runs.push([]); return; }
        runs[runs.length - 1].push(`${x(k).toFixed(1)},${y(pt[p.typed]).toFixed(1)}`);
      });
      const c = colour(p.colour, i);
      for (const pts of runs.filter((r) => r.length > 1)) {
        svg.append(el("svg:polyline", { points: pts.join(" "), fill: "none", stroke: c === "#111111" ? "#e8e8e8" : c, "stroke-width": 5,
          "stroke-dasharray": DASHES[i % DASHES.length], "stroke-linejoin": "round" }));
      }
      const last = [...series].reverse().find((pt) => typeof pt[p.typed] === "number");
      if (last) svg.append(el("svg:text", { x: W - R + 8, y: y(last[p.typed]) + 8 + (i % 2 ? 4 : -4), class: "hist-label" }, p.name.slice(0, 8)));
    });
    return el("figure", { class: "hist-figure" }, el("figcaption", { class: "small" }, "Score over the game"), svg);
  }
  function torqueChart(series, tip) {
    const limit = Math.max(tip || 0, ...series.map((v) => Math.abs(v))) * 1.1 || 1;
    const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "hist-chart", role: "img",
      "aria-label": `the arm's torque over the game; it tips at ±${Math.round(tip)} g·mm` });
    const y = axes(svg, -limit, limit, 4, "the arm's torque, g·mm, over the game →");
    if (tip) {
      for (const s of [1, -1]) {
        svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(s * tip), y2: y(s * tip), class: "hist-tip" }));
        svg.append(el("svg:text", { x: W - R + 8, y: y(s * tip) + 8, class: "hist-label tips" }, s > 0 ? "tips ▲" : "tips ▼"));
      }
    }
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "hist-zero" }));
    const x = (k) => L + ((W - L - R) * k) / (series.length - 1);
    svg.append(el("svg:polyline", { points: series.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(" "), fill: "none",
      class: "hist-torque", "stroke-width": 5, "stroke-linejoin": "round" }));
    return el("figure", { class: "hist-figure" }, el("figcaption", { class: "small" }, "The arm's torque (dashed: where it tips)"), svg);
  }

  // ---------------------------------------------------------------- players
  async function showPlayers() {
    const current = turn();
    const data = await get("/api/stats?limit=200");
    if (!current()) return;
    const body = $("hist-body");
    const msg = el("p", { class: "error", role: "alert", id: "hist-people-msg" });
    const names = data.players.map((p) => p.name);
    const act = async (body_, done) => {
      try { const r = await api().post("/api/people", body_); msg.textContent = ""; done(r); showPlayers(); }
      catch (e) { msg.textContent = e.message; }
    };
    const rows = data.players.map((p) => {
      const detail = el("tr", { class: "hist-more-row", hidden: true }, el("td", { colspan: 8 },
        el("table", { class: "hist-table inner" },
          el("thead", {}, el("tr", {}, ["Game", "Plays", "Wins", "Win rate", "Points a game", "Best", "Streak"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, Object.entries(p.games).map(([g, s]) => el("tr", {},
            el("td", {}, (games.find((x) => x.name === g) || { title: g }).title), el("td", { class: "num" }, s.plays), el("td", { class: "num" }, s.wins),
            el("td", { class: "num" }, pct(s.win_rate)), el("td", { class: "num" }, num(s.points_per_game)), el("td", { class: "num" }, num(s.best_score)),
            el("td", {}, s.streak || "–"))))),
        el("div", { class: "hist-people-actions" },
          el("label", {}, "Rename to ", el("input", { class: "hist-input", type: "text", maxlength: 24, "aria-label": `new name for ${p.name}` })),
          el("button", { class: "btn", type: "button", onclick: (ev) => act({ op: "rename", name: p.name, to: ev.target.previousElementSibling.querySelector("input").value }, () => {}) }, "Rename"),
          el("label", {}, "Same person as ", el("select", { class: "hist-input", "aria-label": `merge ${p.name} into` }, names.filter((n) => n !== p.name).map((n) => el("option", { value: n }, n)))),
          el("button", { class: "btn", type: "button", onclick: (ev) => act({ op: "merge", name: p.name, into: ev.target.previousElementSibling.querySelector("select").value }, () => {}) }, "Merge"),
          el("button", { class: "btn", type: "button", onclick: () => { filters.player = p.name; tab = "plays"; show(); } }, "Their plays"))));
      const row = el("tr", {},
        el("th", { scope: "row" }, el("button", { class: "linkish hist-person", type: "button", "aria-expanded": "false",
          onclick: (ev) => { detail.hidden = !detail.hidden; ev.target.setAttribute("aria-expanded", String(!detail.hidden)); } }, p.name)),
        el("td", { class: "num" }, p.plays), el("td", { class: "num" }, p.wins), el("td", { class: "num" }, pct(p.win_rate)),
        el("td", { class: "num" }, num(p.points_per_game)), el("td", { class: "num" }, num(p.best_score)),
        el("td", {}, whenNode(p.last_played)), el("td", {}, p.streak || "–"));
      return [row, detail];
    }).flat();
    body.replaceChildren(
      el("p", { class: "small" }, `${data.total_players} players. Tap a name for their games, or to rename them or merge two names of one person. Guests are not listed.`),
      el("div", { class: "hist-scroll" }, el("table", { class: "hist-table", id: "hist-players" },
        el("thead", {}, el("tr", {}, ["Player", "Plays", "Wins", "Win rate", "Points a game", "Best", "Last played", "Streak"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows))),
      msg,
      el("button", { class: "btn", type: "button", id: "hist-undo-people", onclick: async () => {
        try { const r = await api().post("/api/people/undo", {}); msg.textContent = `Took back the ${r.undid.op} of ${r.undid.name}.`; showPlayers(); }
        catch (e) { msg.textContent = e.message; }
      } }, "Undo the last rename or merge"));
  }

  // ---------------------------------------------------------------- games
  async function showGames() {
    const current = turn();
    const data = await get("/api/stats?limit=1");
    if (!current()) return;
    const cards = data.games.map((g) => {
      const rows = [["Plays", `${g.plays} (${g.unfinished} unfinished)`], ["Average length", g.timed ? duration(g.average_played_s) : "not known"],
        ["Average winning score", num(g.average_winning_score)]];
      if (g.game === "balance_duels") {
        rows.push(["Ended by a tip", pct(g.tip_share)]);
        rows.push(["Most tipping holders", g.tipping_holders.length ? g.tipping_holders.map((h) => `${h.holder} (${h.tips})`).join(", ") : "none yet"]);
      }
      if (g.game === "imperial") rows.push(["Final power of the leading nation", num(g.average_top_power)], ["Final power, all nations", num(g.average_power)]);
      return el("section", { class: "card hist-game", "aria-label": g.title }, el("h3", { class: "hist-h" }, g.title),
        el("dl", { class: "hist-facts" }, rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
    });
    $("hist-body").replaceChildren(el("div", { class: "hist-grid" }, cards.length ? cards : el("p", {}, "No plays yet.")));
  }

  // ---------------------------------------------------------------- ratings
  let ratingGame = "";
  async function showRatings() {
    if (!ratingGame) ratingGame = (games[0] || {}).name || "balance_duels";
    const current = turn();
    const data = await get(`/api/ratings?game=${encodeURIComponent(ratingGame)}&limit=50`);
    if (!current()) return;
    const top = Math.max(50, ...data.ratings.map((r) => r.mu + 2 * r.sigma));
    const bar = (r) => {
      const svg = el("svg:svg", { viewBox: "0 0 300 40", class: "hist-rating", role: "img", "aria-label": `${r.name}: ${num(r.mu)} plus or minus ${num(2 * r.sigma)}` });
      const x = (v) => (Math.max(0, Math.min(top, v)) / top) * 300;
      svg.append(el("svg:line", { x1: x(r.mu - 2 * r.sigma), x2: x(r.mu + 2 * r.sigma), y1: 20, y2: 20, class: "hist-whisker" }),
        el("svg:rect", { x: x(r.mu) - 6, y: 6, width: 12, height: 28, class: "hist-mu" }));
      return svg;
    };
    $("hist-body").replaceChildren(
      el("label", {}, "Game ", gameSelect(ratingGame, false, (ev) => { ratingGame = ev.target.value; showRatings(); }, "game to rate")),
      el("p", { class: "small" }, "Skill from finished plays only (openskill). Each rating is shown as μ ± 2σ: the bar is where the player's skill very likely lies; it narrows as they play. Ordered by μ − 3σ."),
      data.ratings.length ? el("div", { class: "hist-scroll" }, el("table", { class: "hist-table", id: "hist-ratings" },
        el("thead", {}, el("tr", {}, ["Player", "Rating", "", "Plays"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, data.ratings.map((r) => el("tr", {}, el("th", { scope: "row" }, r.name),
          el("td", { class: "num" }, `${num(r.mu)} ± ${num(2 * r.sigma)}`), el("td", { class: "hist-bar" }, bar(r)), el("td", { class: "num" }, r.plays))))))
        : el("p", {}, "No finished plays of this game yet."));
  }

  // ---------------------------------------------------------------- New game: the names of earlier plays
  let asked = 0;
  let timer = null;
  function clearSuggestions() { document.querySelectorAll(".name-suggest").forEach((n) => n.remove()); }
  function suggest(input, typing) {
    clearTimeout(timer);
    if (typing) { timer = setTimeout(() => suggest(input, false), 150); return; }
    const mine = ++asked;
    fetch(`/api/people?limit=6&q=${encodeURIComponent(input.value.trim().slice(0, 24))}`)
      .then((r) => (r.ok ? r.json() : { people: [] }))    // while the history is still being built: none yet
      .then((data) => {
        if (mine !== asked || document.activeElement !== input) return;
        const seats = input.closest("fieldset") || document;
        const typed = new Set([...seats.querySelectorAll(".seat-name")].filter((i) => i !== input).map((i) => i.value.trim().toLowerCase()));
        const names = data.people.map((p) => p.name).filter((n) => !typed.has(n.toLowerCase()) && n !== input.value.trim());
        clearSuggestions();
        if (!names.length) return;
        const box = el("div", { class: "name-suggest", role: "group", "aria-label": "names from earlier games" }, names.map((n) =>
          el("button", { class: "btn name-chip", type: "button", "aria-label": `use the name ${n}`,
            onmousedown: (ev) => ev.preventDefault(),     // the field keeps its focus
            onclick: () => { input.value = n; clearSuggestions(); } }, n)));
        (input.closest(".seat") || input).after(box);
      }).catch(() => {});
  }
  const setup = $("setup");
  if (setup) setup.addEventListener("close", clearSuggestions);

  const toggle = () => (document.body.classList.contains("history-open") ? close() : open());
  window.CompanionHistory = { open, close, toggle, showPlay, suggest };
})();
