/* Table Companion page: live over Server-Sent Events, drawn by the page itself (no external requests). */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = { black: "#111111", yellow: "var(--yellow)", red: "var(--red)", blue: "var(--blue)" };
  const PLAYER_COLOURS = ["#e8e8e8", "#ffd400", "#ff5c5c", "#4aa8ff", "#b48cff", "#5ce1b0"];
  let state = null;
  let live = {};
  let lastSeq = -1;
  let alarmedFor = null;
  window.COMPANION_VIEWS = window.COMPANION_VIEWS || {};

  function el(tag, attrs, ...children) {
    const node = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.setAttribute("class", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "style") Object.keys(v).forEach(function (prop) { node.style.setProperty(prop, String(v[prop])); });  // CSSOM, one property each: no style attribute (CSP), and a value is never read as more declarations
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c.nodeType ? c : String(c));
    return node;
  }

  let csrf = null;
  let online = false;
  // the button a request came from: busy until its answer, and where its error is shown
  let tapped = null;
  let lastTap = null;          // the last control tapped, and when
  document.addEventListener("click", (ev) => {
    const control = ev.target.closest ? ev.target.closest("button") : null;
    tapped = control;
    if (control) lastTap = { control, at: Date.now() };
  }, true);
  const inflight = new Map();
  function post(path, body, retried) {
    const key = path + " " + JSON.stringify(body || {});
    if (!retried && inflight.has(key)) return inflight.get(key);   // a double tap sends one request
    const button = retried ? null : tapped;
    tapped = null;
    if (!online && path !== "/api/login") return Promise.reject(tapError(button, new Error("No connection to the companion: wait for it to come back, then try again")));
    if (button) { button.disabled = true; button.setAttribute("aria-busy", "true"); }
    const p = send(path, body, retried).then((data) => { clearRefusal(); return data; },
      (e) => { throw tapError(button, e); }).finally(() => {
      inflight.delete(key);
      if (button) { button.removeAttribute("aria-busy"); if (button.isConnected) button.disabled = false; }
    });
    if (!retried) inflight.set(key, p);
    return p;
  }

  // ---------------------------------------------------------------- the page explains itself
  // for every view: a refusal beside the control tapped; a reason (data-why) beside a greyed one
  let refusal = { text: null };
  function recentTap() { return lastTap && Date.now() - lastTap.at < 15000 ? lastTap.control : null; }
  function gameButtons() { return [...document.querySelectorAll("#game button")]; }
  function sameButtons(label) {
    return [...document.querySelectorAll("button")].filter((b) => b.textContent === label && !b.closest("dialog, .top"));
  }
  function tapError(button, err) {
    const at = button || recentTap();
    // (a dialog shows its own errors)
    if (at && at.closest("dialog")) return err;
    refuse(err, at);
    return err;
  }
  function refuse(err, at) {
    const text = (err && err.message) || String(err);
    if (refusal.note) refusal.note.remove();
    refusal = { text, at: at || null, seq: state ? state.seq : null, game: state ? state.game_id : null, scrolled: false,
      key: at ? { label: at.textContent, nth: sameButtons(at.textContent).indexOf(at), index: gameButtons().indexOf(at),
        row: at.parentElement ? at.parentElement.className : "" } : null };
    placeRefusal();
    if (err && typeof err === "object") err.shown = true;
  }
  // a note goes after the control's list item or row, else after the control
  function noteAfter(control) {
    const item = control.closest("li");
    if (item && item.closest("#game")) return item;
    const row = control.parentElement;
    const display = row ? getComputedStyle(row).display : "";
    return row && /flex|grid/.test(display) && row.children.length > 1 && !row.matches("label") ? row : control;
  }
  function placeRefusal() {
    const slot = $("refusal");
    if (!refusal.text) { slot.hidden = true; return; }
    let at = refusal.at && refusal.at.isConnected && !refusal.at.closest(".top") ? refusal.at : null;
    if (!at && refusal.key) at = sameButtons(refusal.key.label)[refusal.key.nth] || null;
    if (!at && refusal.key && refusal.key.index >= 0) {
      // relabelled by a redraw: the button in the same place of the same row
      const there = gameButtons()[refusal.key.index];
      if (there && there.parentElement && there.parentElement.className === refusal.key.row) at = there;
    }
    let shown = slot;
    slot.textContent = "⚠ " + refusal.text;
    slot.hidden = !!at;      // no such control now: the header says it
    if (at) {
      refusal.at = at;
      const after = noteAfter(at);
      shown = refusal.note = refusal.note || el("p", { class: "tap-error", role: "alert" }, slot.textContent);
      if (!shown.isConnected || shown.previousElementSibling !== after) after.after(shown);
    } else if (refusal.note) refusal.note.remove();
    if (!refusal.scrolled) {
      refusal.scrolled = true;
      const box = shown.getBoundingClientRect();
      const top = document.querySelector(".top").getBoundingClientRect().bottom;
      if (box.top < top || box.bottom > window.innerHeight) shown.scrollIntoView({ block: "center" });
    }
  }
  function clearRefusal() {
    if (refusal.note) refusal.note.remove();
    refusal = { text: null };
    $("refusal").hidden = true;
  }
  let whyCount = 0;
  function explain() {
    const greyed = [...document.querySelectorAll("button:disabled, select:disabled, input:disabled")]
      .filter((c) => c.getAttribute("aria-busy") !== "true" && c.dataset.why);
    for (const c of greyed) {
      const why = c.dataset.why;
      // greyed neighbours with one reason share one note
      let last = c;
      for (let n = c.nextElementSibling; n && n.matches(":disabled") && n.dataset.why === why; n = n.nextElementSibling) last = n;
      // a box ticked in its label: the note after the label's words, not between the box and them
      const label = c.matches("input[type=checkbox], input[type=radio]") ? c.closest("label") : null;
      let note = label ? label.lastElementChild : last.nextElementSibling;
      if (!(note && note.classList.contains("why") && note.textContent === why)) {
        note = el("span", { class: "why", id: `why-${++whyCount}` }, why);
        if (label) label.append(note); else last.after(note);
      }
      if (c.dataset.whyNote !== note.id) {
        describedBy(c, c.dataset.whyNote, note.id);
        c.dataset.whyNote = note.id;
      }
    }
    document.querySelectorAll("[data-why-note]").forEach((c) => {
      if (!greyed.includes(c)) { describedBy(c, c.dataset.whyNote, null); delete c.dataset.whyNote; }
    });
    document.querySelectorAll(".why").forEach((n) => { if (!greyed.some((g) => g.dataset.whyNote === n.id)) n.remove(); });
  }
  function describedBy(control, old, id) {
    const ids = (control.getAttribute("aria-describedby") || "").split(/\s+/).filter((x) => x && x !== old);
    if (id) ids.push(id);
    if (ids.length) control.setAttribute("aria-describedby", ids.join(" ")); else control.removeAttribute("aria-describedby");
  }
  // views redraw themselves: the notes follow every change
  let explaining = false;
  const watcher = new MutationObserver(() => {
    if (explaining) return;
    explaining = true;
    queueMicrotask(() => {
      try {
        explain();
        if (refusal.text) placeRefusal();
      } finally { watcher.takeRecords(); explaining = false; }
    });
  });
  watcher.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "data-why"] });

  async function send(path, body, retried) {
    const headers = { "Content-Type": "application/json" };
    if (csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body || {}), credentials: "same-origin" });
    const data = await r.json().catch(() => ({ error: r.statusText }));
    if ((r.status === 401 || r.status === 403) && data.pin_required !== false && !retried && path !== "/api/login") {
      if (r.status === 401 || !csrf) { await askPin(); return send(path, body, true); }
    }
    if (!r.ok) throw new Error(data.error || r.statusText);
    if (data.state) apply(data.state);
    return data;
  }

  // the table PIN: asked once, then the session cookie and CSRF token carry every change
  function askPin() {
    return new Promise((resolve, reject) => {
      const dlg = $("pin"), form = $("pin-form"), input = $("pin-input"), err = $("pin-error");
      err.textContent = "";
      input.value = "";
      form.onsubmit = async (ev) => {
        ev.preventDefault();
        if (ev.submitter && ev.submitter.value === "cancel") { dlg.close(); reject(new Error("the PIN is needed for changes")); return; }
        try {
          const data = await send("/api/login", { pin: input.value }, true);
          csrf = data.csrf;
          dlg.close();
          resolve();
        } catch (e) { err.textContent = e.message; input.value = ""; }
      };
      dlg.showModal();
      input.focus();
    });
  }

  const api = {
    act: (action) => post("/api/action", { action }),
    roll: (n) => post("/api/dice", { n: n || 1 }).then((d) => d.values),
    undo: () => post("/api/undo"),
    map: (game, add) => post(`/api/map/${game}`, { add }),
    post: (path, body) => post(path, body),    // the history view's changes (history.js): the PIN and CSRF as every change
    // a view's own check, shown as the daemon's refusals are
    refuse: (err, control) => refuse(err, control || recentTap()),
    // the end of a view's request chain
    refused: (err) => { if (!(err && err.shown)) refuse(err, recentTap()); },
    // what a view's player has picked but not sent, kept for this game in this tab (a reload brings it back)
    keep: (name, value) => {
      try { sessionStorage.setItem(`companion:${state.game_id}:${name}`, JSON.stringify(value)); }
      catch (e) { /* storage full or refused (a private window): the picks are only lost on a reload */ }
    },
    kept: (name) => {
      try { return JSON.parse(sessionStorage.getItem(`companion:${state.game_id}:${name}`)); }
      catch (e) { return null; }
    },
  };
  window.companionApi = api;

  function showError(err) {
    if (err && err.shown) return;   // already beside the button tapped
    const b = $("banner");
    b.textContent = err.message || String(err);
    b.hidden = false;
    clearTimeout(showError.t);
    showError.t = setTimeout(() => { b.hidden = true; }, 6000);
  }

  // ---------------------------------------------------------------- the stream
  let source = null;
  let lastMessage = Date.now();
  const STALE_MS = 6000;  // the daemon sends a live event at least every 2 s
  function connect() {
    if (source) source.close();
    lastMessage = Date.now();
    // EventSource resends Last-Event-ID itself on an automatic reconnect; we add it when we reconnect by hand
    const url = lastSeq >= 0 ? `/api/stream?last_event_id=${lastSeq}` : "/api/stream";
    source = new EventSource(url);
    source.addEventListener("open", () => setConn(true));
    source.addEventListener("error", () => {
      setConn(false);
      if (source.readyState === EventSource.CLOSED) { setTimeout(connect, 2000); }
    });
    source.addEventListener("message", () => { lastMessage = Date.now(); });
    source.addEventListener("state", (e) => {
      lastMessage = Date.now();
      const msg = JSON.parse(e.data);
      if (msg.state) apply(msg.state);
    });
    source.addEventListener("live", (e) => { lastMessage = Date.now(); setConn(true); live = JSON.parse(e.data); renderLive(); });
  }
  // a stream can die without an error event (a stalled daemon, a Wi-Fi hiccup): notice the silence, say so, reconnect
  setInterval(() => {
    if (source && Date.now() - lastMessage > STALE_MS) { setConn(false); connect(); }
  }, 1000);
  function setConn(ok) {
    const c = $("conn");
    c.textContent = ok ? "live" : "reconnecting…";
    c.className = "conn " + (ok ? "ok" : "bad");
    document.body.classList.toggle("stale", !ok);
    $("offline").hidden = ok;
    if (online !== ok) { online = ok; renderLive(); }
  }

  function apply(s) {
    if (s.seq < lastSeq && state && s.game_id === state.game_id) return;
    // the same state again (the stream's first message repeats what the page fetched): nothing to redraw, and a
    // redraw would close what a finger just opened
    if (state && s.seq === state.seq && s.game_id === state.game_id) {
      if (s.live) { live = s.live; renderLive(); }
      return;
    }
    // a refusal belongs to the state it was tapped in
    if (refusal.text && (refusal.seq !== s.seq || refusal.game !== s.game_id)) clearRefusal();
    state = s;
    lastSeq = s.seq;
    if (s.live) live = s.live;
    render();
  }

  // ---------------------------------------------------------------- rendering
  // who sits at the table, in their colours, whose turn it is and who won: read from each game's view
  const COLOUR_CSS = { black: "#111111", white: "#f4f6f8", red: "#e23b3b", blue: "#2f7de1", yellow: "#ffd400",
    green: "#1f9d55", purple: "#9b5de5", orange: "#ff8c1a", grey: "#8a8f98", gray: "#8a8f98", pink: "#ff6fb5", brown: "#8b5a2b" };
  const cssColour = (c, i) => COLOUR_CSS[String(c || "").toLowerCase()] || PLAYER_COLOURS[i % 6];
  function seating() {
    const v = state.view || {};
    const list = Array.isArray(v.players) ? v.players : [];
    const players = list.map((p, i) => ({ name: p.name, colour: state.game === "imperial" ? PLAYER_COLOURS[i % 6] : cssColour(p.colour, i) }));
    let turn = null, over = false, result = null;
    if (state.game === "balance_duels") {
      over = v.over;
      turn = (list.find((p) => p.seat === v.to_move) || {}).name;
    } else if (state.game === "imperial") {
      over = v.game_over;
      turn = v.acting_player;
      result = over && v.winners && v.winners.length ? `${v.winners.join(" and ")} ${v.winners.length > 1 ? "win" : "wins"}` : null;
    } else {
      over = !!v.over;
      turn = (v.turn && v.turn.player) || v.setup_player || null;
      // Global Powers keeps the last turn through its evaluation, which is no one player's to do
      if (state.game === "global_powers" && v.phase !== "play") turn = null;
      result = over && v.winner ? `${v.winner} wins` : null;
    }
    // Global Powers' set-up (offers made by all at once) and its evaluations are the whole table's to do
    const everyone = !over && !turn && state.game === "global_powers" && ["setup", "evaluation"].includes(v.phase);
    // winners by name, for the score panel's mark (Balance Duels names them by seat)
    const won = !over ? [] : state.game === "balance_duels" ? (v.winners || []).map((s) => (list.find((p) => p.seat === s) || {}).name)
      : state.game === "imperial" ? v.winners || [] : [v.winner];
    return { players, turn: over ? null : turn, everyone, over, won, result: result || v.message || "" };
  }
  // the initial in black or white, whichever reads on the player's colour
  function inkOn(colour) {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour || "");
    if (!m) return "#000";
    const [r, g, b] = m.slice(1).map((x) => { const c = parseInt(x, 16) / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.18 ? "#000" : "#fff";
  }
  function swatch(p) {
    return el("span", { class: "swatch mark", style: { "background-color": p.colour, color: inkOn(p.colour) }, "aria-hidden": "true" },
      (p.name || "?").trim().charAt(0).toUpperCase());
  }

  // Each game's view (its script, styles and the map form it uses) loads when a game of its kind is first shown:
  // a tablet on the table's Wi-Fi fetches only what the game on the table needs
  const VIEW_FILES = {
    imperial: ["view_imperial.css", "view_imperial.js"],
    risk: ["view_risk.css", "view_map.js", "view_risk.js"],
    balance_of_power: ["view_balance_of_power.css", "view_map.js", "view_balance_of_power.js"],
    global_powers: ["view_global_powers.css", "view_global_powers.js"],
  };
  const fetched = {};
  const viewsLoading = {};
  function fetchOnce(file) {
    if (!fetched[file]) {
      fetched[file] = new Promise((resolve, reject) => {
        const node = file.endsWith(".css")
          ? Object.assign(document.createElement("link"), { rel: "stylesheet", href: `/static/${file}` })
          : Object.assign(document.createElement("script"), { src: `/static/${file}`, async: false });
        node.onload = resolve;
        node.onerror = () => { delete fetched[file]; node.remove(); reject(new Error(`The page could not load ${file}: is the companion reachable? Reload to try again.`)); };
        (file.endsWith(".css") ? document.head : document.body).append(node);
      });
    }
    return fetched[file];
  }
  function loadView(game) {
    if (!viewsLoading[game]) {
      // scripts added with async = false run in the order added (the map form before the view that uses it)
      viewsLoading[game] = Promise.all(VIEW_FILES[game].map(fetchOnce)).catch((e) => { delete viewsLoading[game]; throw e; });
    }
    return viewsLoading[game];
  }

  function render() {
    $("title").textContent = state.title;
    const view = state.view || {};
    const seats = seating();
    $("message").textContent = view.message || "";
    const turn = $("turn");
    const mover = seats.players.find((p) => p.name === seats.turn);
    turn.hidden = !mover && !seats.everyone;
    if (mover) {
      turn.replaceChildren(swatch(mover), el("span", {}, `${mover.name}'s turn`));
      turn.style.setProperty("border-color", mover.colour);
    } else if (seats.everyone) {
      turn.replaceChildren(el("span", { class: "marks" }, seats.players.map(swatch)), el("span", {}, "Everyone's turn"));
      turn.style.removeProperty("border-color");
    }
    // Undo says what it takes back
    const undo = $("btn-undo");
    undo.disabled = !state.can_undo;
    const undoing = state.can_undo && state.undo_text ? `Undo: ${state.undo_text}` : null;
    undo.title = undoing || "Nothing to undo yet";
    $("undo-what").textContent = undoing ? `↶ takes back: ${state.undo_text}` : "↶ nothing to undo yet";
    $("undo-what").title = undo.title;
    const arm = state.game === "balance_duels";
    document.body.classList.toggle("arm-game", arm);
    $("btn-cal").hidden = !arm;
    $("devices-card").hidden = !arm && !(live.devices || []).some((d) => !isArmDevice(d));
    if (!arm) $("alarm").hidden = true;
    const game = $("game");
    if (state.game === "balance_duels") renderBalance(game, view);
    else if (window.COMPANION_VIEWS[state.game]) {
      try { window.COMPANION_VIEWS[state.game](game, view, api); }
      catch (e) { game.replaceChildren(el("p", { class: "error" }, "This view failed to draw: " + e.message)); }
    } else if (VIEW_FILES[state.game]) {
      const wanted = state.game;
      if (!game.querySelector(".view-loading")) game.replaceChildren(el("p", { class: "view-loading", role: "status" }, `Loading the ${state.title} view…`));
      loadView(wanted).then(() => { if (state && state.game === wanted) render(); })
        .catch((e) => game.replaceChildren(el("p", { class: "error" }, e.message)));
    } else game.replaceChildren(el("pre", {}, JSON.stringify(view, null, 2)));
    // a box that scrolls sideways must take the keyboard's focus too, or its hidden part is out of reach
    game.querySelectorAll("table, .imp-scroll, .imp-track-box").forEach((box) => {
      if (box.scrollWidth > box.clientWidth + 1) box.setAttribute("tabindex", "0"); else box.removeAttribute("tabindex");
    });
    if (seats.over) {
      game.prepend(el("section", { class: "card over-card", role: "status" }, el("h2", {}, "Game over"),
        el("p", { class: "over-line" }, seats.result),
        el("button", { class: "btn primary", type: "button", onclick: openSetup }, "New game")));
    }
    renderScores(seats);
    renderLog();
    renderLive();
    const problems = state.problems || [];
    if (problems.length) showError(new Error(problems[problems.length - 1]));
  }

  function renderScores(seats) {
    const scores = state.scores || {};
    // a player whose score is secret for now (Imperial's hidden cash) is listed, as "hidden", in seat order
    const hidden = (state.view && state.view.cash_hidden) || [];
    const names = [...new Set([...seats.players.map((p) => p.name).filter((n) => n in scores || hidden.includes(n)), ...Object.keys(scores)])];
    const colour = (n, i) => (seats.players.find((p) => p.name === n) || { colour: PLAYER_COLOURS[i % 6] }).colour;
    $("scores").replaceChildren(el("table", { class: "scores" },
      // the score alone can point the wrong way (Balance Duels counts pawns home, a tip decides too): mark who won
      names.map((n, i) => el("tr", {}, el("td", {}, swatch({ name: n, colour: colour(n, i) }), " ", n, (seats.won || []).includes(n) ? el("b", { class: "won" }, " · won") : null),
        el("td", { class: "num" + (n in scores ? "" : " hidden") }, n in scores ? scores[n] : "hidden")))));
    $("score-chart").replaceChildren(scoreChart(state.score_history || [], names, colour));
  }

  function scoreChart(history, names, colour) {
    const w = 300, h = 120, pad = 6;
    const svg = el("svg:svg", { viewBox: `0 0 ${w} ${h}`, width: "100%", role: "img", "aria-label": "score history" });
    if (history.length < 2) return "";   // nothing to draw yet: no empty box
    let max = 1;
    for (const p of history) for (const n of names) max = Math.max(max, Number(p[n]) || 0);
    names.forEach((n, i) => {
      // a point the history lacks (a score that was secret then) breaks the line rather than drawing a 0
      const runs = [[]];
      history.forEach((p, k) => {
        if (typeof p[n] !== "number") { if (runs[runs.length - 1].length) runs.push([]); return; }
        runs[runs.length - 1].push(`${pad + (k / (history.length - 1)) * (w - 2 * pad)},${h - pad - (p[n] / max) * (h - 2 * pad)}`);
      });
      for (const pts of runs.filter((r) => r.length > 1)) {
        svg.append(el("svg:polyline", { points: pts.join(" "), fill: "none", stroke: colour(n, i), "stroke-width": 3,
          "stroke-dasharray": i % 2 ? "6 3" : null }));
      }
    });
    return svg;
  }

  // who did what, as the daemon tells it (state.log, newest last)
  function renderLog() {
    const entries = state.log || [];
    const source = { page: "from the page", button: "by the buttons", sensor: "by the sensors" };
    $("log").replaceChildren(...entries.slice().reverse().map((e) =>
      el("li", { class: e.kind === "undo" ? "undone" : null }, e.text, " ",
        el("span", { class: "src" }, `#${e.seq} · ${source[e.source] || e.source}`))));
  }

  function isArmDevice(d) { return !/button|light|led/i.test(`${d.kind || ""} ${d.name || ""}`); }
  function renderLive() {
    const arm = !state || state.game === "balance_duels";
    const devs = (live.devices || []).filter((d) => arm || !isArmDevice(d));
    $("devices").replaceChildren(...(devs.length ? devs.map((d) => el("div", { class: "dev" }, el("span", {}, d.name),
      !online ? el("span", { class: "unknown" }, "? unknown: no connection") : d.ok ? el("span", { class: "good" }, "✓ ok") : el("span", { class: "bad" }, `✕ unavailable: ${d.reason}` + (d.since ? ` (since ${d.since})` : ""))))
      : [el("p", { class: "small" }, "No sensors: play by the page and buttons.")]),
      ...(live.mqtt ? [el("div", { class: "dev" }, el("span", {}, "MQTT"), live.mqtt.state === "connected"
        ? el("span", { class: "good" }, "✓ connected")
        : el("span", { class: "bad" }, `✕ ${live.mqtt.state}` + (live.mqtt.down_for_s ? ` for ${Math.round(live.mqtt.down_for_s)} s` : "") +
          (live.mqtt.last_error ? `: ${live.mqtt.last_error}` : "") + (live.mqtt.queued ? ` (${live.mqtt.queued} queued)` : "")))] : []));
    $("report-line").hidden = !live.recorder;
    const box = document.querySelector(".bd-live");
    if (box) fillLive(box);
    renderSensing();
    const beam = document.querySelector(".bd-beam");
    if (beam && typeof live.angle_deg === "number" && state && state.view.model) {
      const max = state.view.model.theta_max_deg;
      const deg = Math.max(-max, Math.min(max, live.angle_deg));
      beam.setAttribute("transform", beam.getAttribute("transform").replace(/rotate\([-\d.]+/, `rotate(${deg.toFixed(2)}`));
    }
    if (live.refusal) showError(new Error(live.refusal));
    const notes = live.notices || [];
    const nb = $("notices");
    const key = notes.join("\n");
    if (nb.dataset.key !== key) {
      nb.dataset.key = key;
      nb.hidden = !notes.length;
      nb.replaceChildren(...notes.map((n) => el("p", {}, "⚠ " + n)));
    }
    document.querySelectorAll(".bd-move").forEach((b, i) => b.classList.toggle("selected", i === live.selection));
    // hints, in their own line
    const choice = $("button-choice");
    choice.hidden = !live.selection_label;
    choice.textContent = live.selection_label ? `buttons: ▶ ${live.selection_label}` : "";
    const duel = !!state && state.game === "balance_duels";
    $("reading").hidden = !(duel && live.reading && !live.question);
    const held = $("held-roll");
    held.hidden = !(duel && live.held_roll);
    held.textContent = duel && live.held_roll ? `Roll ${live.held_roll} kept: it counts as soon as the last move is settled.` : "";
  }
  // "Report a misread": the flight recorder's last minutes as one file to send to whoever keeps the companion
  async function reportMisread(retried) {
    const r = await fetch("/api/flight-recorder", { credentials: "same-origin" });
    if (r.status === 401 && !retried) { await askPin(); return reportMisread(true); }
    if (!r.ok) { const d = await r.json().catch(() => ({})); throw new Error(d.error || r.statusText); }
    const blob = await r.blob();
    const m = /filename="([^"]+)"/.exec(r.headers.get("Content-Disposition") || "");
    const name = m ? m[1] : "misread.tar.gz";
    const a = el("a", { href: URL.createObjectURL(blob), download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
    showError(new Error(`Saved ${name}: the last minutes at the table. Send it with a word on what went wrong.`));
  }
  $("report").addEventListener("click", (ev) => { ev.preventDefault(); reportMisread(false).catch(showError); });

  // the companion follows the arm by its sensors: its questions, and a board that does not match the game
  function renderSensing() {
    const box = $("sensing");
    const q = live.question;
    const parts = [];
    if (q) {
      parts.push(el("p", { class: "sensing-q" }, q.text));
      parts.push(el("div", { class: "bd-controls" }, q.options.map((label, i) => el("button", {
        class: "btn primary", type: "button", onclick: () => post("/api/sensing/answer", { option: i }).catch(showError) }, label))));
    }
    // the sensors' figures stay folded away: the players need the holder to check, not the grams
    const warn = (text, details) => {
      parts.push(el("p", { class: "sensing-warn" }, "⚠ " + text));
      if (details) parts.push(el("details", { class: "sensing-details small" }, el("summary", {}, "Sensor figures"), el("p", {}, details)));
    };
    if (!q && live.candidates && live.candidates.length) {
      parts.push(el("p", { class: "sensing-q" }, "Not sure yet. Which move was it?"));
      parts.push(el("div", { class: "bd-controls" }, live.candidates.map((label, i) => el("button", {
        class: "btn", type: "button", onclick: () => post("/api/sensing/answer", { option: i }).catch(showError) }, label))));
    }
    if (live.mismatch) warn(live.mismatch, live.mismatch_details);
    if (live.sensing_notice) warn(live.sensing_notice, live.sensing_details);
    if (live.recorder && (live.mismatch || live.sensing_notice || q)) {
      parts.push(el("p", { class: "small" }, "Did the companion get it wrong? ", el("button", { class: "btn", type: "button",
        onclick: () => reportMisread(false).catch(showError) }, "Report a misread")));
    }
    // (not the figures, which waver from reading to reading: an opened "Sensor figures" stays open)
    const key = JSON.stringify([q, live.mismatch, live.sensing_notice, live.candidates]);
    if (box.dataset.key === key) return;  // rebuilt only when it changes, so a finger on a button is not lost
    box.dataset.key = key;
    box.hidden = parts.length === 0;
    box.replaceChildren(...parts);
  }
  // the sensing box lies over the foot of the page: as much room below the page's end, so nothing is out of reach
  new ResizeObserver(() => {
    const box = $("sensing");
    document.body.style.setProperty("--sheet", box.hidden ? "0px" : `${box.offsetHeight}px`);
  }).observe($("sensing"));

  function fillLive(box) {
    const fmt = (v, unit) => (v === null || v === undefined ? "—" : `${v} ${unit}`);
    box.replaceChildren(
      el("span", {}, "Weight ", el("b", {}, fmt(live.weight_g, "g"))),
      el("span", {}, "Angle ", el("b", {}, fmt(live.angle_deg, "°"))),
      el("span", {}, "Sensed torque ", el("b", {}, fmt(live.torque_gmm, "g·mm"))),
      el("span", {}, "Board contact ", el("b", {}, live.on_board === null || live.on_board === undefined ? "—" : live.on_board ? "yes" : "no")));
  }

  // ---------------------------------------------------------------- Balance Duels
  // SVG text scales with the drawing: sized from the width it is shown at, so that no label falls under 13 px
  function svgUnits(px) {
    const card = document.querySelector(".bd-arm");
    const wide = window.matchMedia("(min-width: 900px) and (orientation: landscape)").matches;
    const shown = Math.max(280, (card ? card.clientWidth : ($("game").clientWidth || 1000) * (wide ? 0.58 : 1)) - 30);
    return Math.max(px, (px * 1000) / shown);
  }
  // each seat's pawns have their own shape as well as their colour (circle, square, diamond, triangle), so that
  // colour-blind players and a greyscale screen tell them apart
  function pawnShape(seat, x, y, r, attrs, title) {
    const pts = (list) => list.map(([dx, dy]) => `${(x + dx * r).toFixed(1)},${(y + dy * r).toFixed(1)}`).join(" ");
    if (seat === 2) return el("svg:rect", { x: x - r * 0.9, y: y - r * 0.9, width: r * 1.8, height: r * 1.8, rx: r * 0.15, ...attrs }, title);
    if (seat === 3) return el("svg:polygon", { points: pts([[0, -1.15], [1.15, 0], [0, 1.15], [-1.15, 0]]), ...attrs }, title);
    if (seat === 4) return el("svg:polygon", { points: pts([[0, -1.2], [1.1, 0.85], [-1.1, 0.85]]), ...attrs }, title);
    return el("svg:circle", { cx: x, cy: y, r, ...attrs }, title);
  }
  function armSvg(v) {
    const fs = svgUnits(14), narrow = fs > 30;
    const W = 1000, H = narrow ? 384 + fs * 1.2 : 380, cx = W / 2, armY = 150;
    const reach = Math.max(...v.model.holders.map((h) => Math.abs(h.x_mm))) * 1.12;
    const sx = (x) => cx + (x / reach) * (W / 2 - 20);
    const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `balance arm, net torque ${v.net_torque} g·mm` });
    // the board the arm rests on when it tips
    svg.append(el("svg:rect", { x: 0, y: 250, width: W, height: 8, fill: "#3a4652" }));
    svg.append(el("svg:polygon", { points: `${cx - 30},250 ${cx + 30},250 ${cx},${armY + 6}`, fill: "#5a6672" }));
    const ratio = Math.max(-1, Math.min(1, v.net_torque / v.model.kappa_gmm));
    const maxDeg = v.model.theta_max_deg;
    let deg = (Math.asin(ratio) * 180) / Math.PI;
    if (live && typeof live.angle_deg === "number") deg = live.angle_deg;
    deg = Math.max(-maxDeg, Math.min(maxDeg, deg));
    const arm = el("svg:g", { transform: `rotate(${deg.toFixed(2)} ${cx} ${armY})`, class: "bd-beam" });
    arm.append(el("svg:rect", { x: 20, y: armY - 6, width: W - 40, height: 12, rx: 6, fill: "#c9b38a" }));
    for (const h of v.holders) {
      const x = sx(h.x_mm);
      const slotW = h.capacity === 2 ? 46 : 24;
      arm.append(el("svg:rect", { x: x - slotW / 2, y: armY - 36, width: slotW, height: 30, rx: 5, fill: "none", stroke: "#8796a5", "stroke-width": 2 }));
      h.pawns.forEach((p, i) => {
        const r = Math.min(32, svgUnits(p.size === "L" ? 11 : 8));
        const px = h.capacity === 2 ? x - r + i * 2 * r : x;
        arm.append(pawnShape(p.seat, px, armY - 21, r, { fill: COLOURS[p.colour], stroke: p.colour === "black" ? "#fff" : "#000", "stroke-width": 2 },
          el("svg:title", {}, `${p.colour} ${p.size} on ${h.id}`)));
        arm.append(el("svg:text", { x: px, y: armY - 21 + svgUnits(13) * 0.35, "text-anchor": "middle", "font-size": svgUnits(13), "font-weight": 800,
          fill: p.colour === "black" ? "#fff" : "#000" }, p.size));
      });
      // on a narrow drawing the holders' numbers alone (the side is written once at each end), or they run together
      arm.append(el("svg:text", { x, y: armY + 12 + svgUnits(14), "text-anchor": "middle", "font-size": svgUnits(14), fill: "#c9d1d9" },
        narrow ? h.id.replace(/^[A-Za-z]+/, "") : h.id));
    }
    svg.append(arm);
    // one bar per holder: its torque (up for the right-hand side's pull, scaled to the tipping torque)
    const barBase = 320, barScale = 60 / v.tip_torque;
    svg.append(el("svg:line", { x1: 20, x2: W - 20, y1: barBase, y2: barBase, stroke: "#3a4652" }));
    for (const h of v.holders) {
      const hgt = Math.min(60, Math.abs(h.torque) * barScale);
      const up = h.torque >= 0;
      svg.append(el("svg:rect", { class: "bd-bar", "data-holder": h.id, x: sx(h.x_mm) - 12, width: 24,
        y: up ? barBase - hgt : barBase, height: Math.max(hgt, h.torque ? 1 : 0), fill: up ? "#4fa3ff" : "#ffb000" },
        el("svg:title", {}, `${h.id}: ${h.torque} g·mm`)));
    }
    if (narrow) {
      // a line of its own under the bars: each side's letter at its end, the bars' legend between
      const y = 384 + fs;
      const sides = [...new Set(v.holders.map((h) => JSON.stringify([Math.sign(h.x_mm), h.id.replace(/\d+$/, "")])))].map(JSON.parse);
      for (const [sign, letter] of sides) {
        svg.append(el("svg:text", { x: sign < 0 ? 20 : W - 20, y, "text-anchor": sign < 0 ? "start" : "end",
          "font-size": fs, "font-weight": 700, fill: "#c9d1d9" }, sign < 0 ? `← ${letter}` : `${letter} →`));
      }
      svg.append(el("svg:text", { x: cx, y, "text-anchor": "middle", "font-size": svgUnits(13), fill: "#c9d1d9" }, "torque per holder"));
    } else {
      svg.append(el("svg:text", { x: 24, y: 376, "font-size": svgUnits(13), fill: "#c9d1d9" },
        "torque per holder (bars), scaled to the tipping torque"));
    }
    return svg;
  }

  function gauge(v) {
    const fs = svgUnits(14);
    const W = 1000, H = 52 + fs, cx = W / 2, span = W / 2 - 40;
    const lim = v.tip_torque * 1.3;
    const sx = (t) => cx + (Math.max(-lim, Math.min(lim, t)) / lim) * span;
    const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "bd-gauge",
      "aria-label": `net torque ${v.net_torque} of ${v.tip_torque} g·mm` });
    svg.append(el("svg:defs", {}, el("svg:pattern", { id: "hatch", width: 10, height: 10, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      el("svg:rect", { width: 5, height: 10, fill: "#ff4d6d" }))));
    svg.append(el("svg:rect", { x: sx(-lim), y: 20, width: sx(-v.tip_torque) - sx(-lim), height: 24, fill: "url(#hatch)" }));
    svg.append(el("svg:rect", { x: sx(v.tip_torque), y: 20, width: sx(lim) - sx(v.tip_torque), height: 24, fill: "url(#hatch)" }));
    svg.append(el("svg:rect", { x: sx(-v.tip_torque), y: 20, width: sx(v.tip_torque) - sx(-v.tip_torque), height: 24, fill: "#26303a", stroke: "#8796a5" }));
    const nx = sx(v.net_torque);
    svg.append(el("svg:polygon", { class: "bd-needle", points: `${nx - 9},8 ${nx + 9},8 ${nx},50`, fill: "#ffd166", stroke: "#000" }));
    const small = svgUnits(13) > 24;
    svg.append(el("svg:text", { x: cx, y: 48 + fs * 0.9, "text-anchor": "middle", "font-size": fs, fill: "#f4f6f8" },
      small ? `torque ${v.net_torque} · tips ±${v.tip_torque}` : `net torque ${v.net_torque} g·mm · tips at ±${v.tip_torque} · margin ${v.margin}`));
    return svg;
  }

  function renderBalance(root, v) {
    const players = el("div", { class: "bd-players" }, v.players.map((p) => el("div", {
      class: "bd-player" + (p.seat === v.to_move ? " turn" : "") + (p.in_play ? "" : " out") },
      swatch({ name: p.name, colour: COLOURS[p.colour] }), " ", el("b", {}, p.name),
      ` · home ${p.home}/${p.pawns} · on table ${p.on_table.join(" ") || "—"}`)));
    const die = v.roll ? el("div", { class: "bd-die", "aria-label": `die shows ${v.roll}` }, v.roll) : el("div", { class: "bd-die empty" }, "roll");
    const lightText = { green: "● all moves safe", amber: "▲ some moves tip", red: "■ TIPPED", off: "○ waiting" }[v.indicator] || v.indicator;
    const controls = el("div", { class: "bd-controls" });
    if (!v.over && v.roll === null) {
      controls.append(el("button", { class: "btn primary", type: "button", id: "bd-roll", onclick: () => post("/api/roll", {}).catch(showError) }, "Roll the die"));
      for (let n = 1; n <= 6; n++) controls.append(el("button", { class: "btn", type: "button", "aria-label": `we rolled ${n}`,
        onclick: () => post("/api/roll", { value: n }).catch(showError) }, String(n)));
    }
    if (v.tip_can_be_reported) {
      controls.append(el("button", { class: "btn", type: "button", onclick: () => api.act({ type: "tip" }).catch(showError) }, "The arm tipped"));
    }
    const moves = el("ul", { class: "bd-moves", "aria-label": "legal moves" }, v.moves.map((m) => el("li", {},
      el("button", { class: "btn bd-move", type: "button", onclick: () => api.act({ type: "move", move: m.move }).catch(showError) },
        el("span", {}, m.text),
        // a pass has no verdict (it moves nothing): no rating beside it
        m.verdict ? el("span", { class: "verdict " + m.verdict }, m.verdict === "safe" ? "✓ safe" : m.verdict === "risky" ? `⚠ ${(m.tip_probability * 100).toFixed(0)}%` : "✕ tips") : null))));
    root.replaceChildren(el("div", { class: "bd" },
      el("div", { class: "card bd-arm" }, armSvg(v), gauge(v), el("div", { class: "bd-live" })),
      el("div", { class: "card bd-play" }, players,
        el("div", { class: "bd-status" }, die, el("span", { class: "bd-light " + v.indicator }, lightText),
          el("span", { class: "bd-turn-no" }, `turn ${v.turn}` + (v.round > 1 ? ` · round ${v.round}` : ""))),
        controls, moves,
        el("details", {}, el("summary", {}, "Recent moves"), el("ol", {}, (v.history || []).map((h) => el("li", {}, h)))))));
    const alarm = $("alarm");
    if (v.tipped_by !== null && v.tip_message) {
      // in a game that goes on, what the table does now: clear the arm for the next round (gone with its first roll)
      alarm.replaceChildren(el("span", { class: "alarm-what" }, "⚠ " + v.tip_message + " ⚠"),
        v.tip_next ? el("span", { class: "alarm-next" }, v.tip_next) : null);
      alarm.hidden = false;
      if (alarmedFor !== state.seq) { alarmedFor = state.seq; beep(); }
    } else alarm.hidden = true;
  }

  function beep() {
    try {
      const ctx = beep.ctx || (beep.ctx = new (window.AudioContext || window.webkitAudioContext)());
      const o = ctx.createOscillator(), g = ctx.createGain();
      o.type = "square"; o.frequency.value = 880; g.gain.value = 0.2;
      o.connect(g); g.connect(ctx.destination); o.start(); o.stop(ctx.currentTime + 1.2);
    } catch (e) { /* audio needs a touch first on some tablets; the flashing banner still shows */ }
  }

  // ---------------------------------------------------------------- controls
  $("btn-undo").addEventListener("click", () => api.undo().catch(showError));
  $("upload").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    ev.target.value = "";
    if (!file) return;
    const send = async (retried) => {
      const headers = { "Content-Type": "application/x-ndjson" };
      if (csrf) headers["X-CSRF-Token"] = csrf;
      const r = await fetch("/api/record", { method: "POST", headers, body: await file.text(), credentials: "same-origin" });
      const data = await r.json().catch(() => ({ error: r.statusText }));
      if (r.status === 401 && !retried) { await askPin(); return send(true); }
      if (!r.ok) throw new Error(data.error);
      apply(data.state);
    };
    send(false).catch(showError);
  });
  $("btn-new").addEventListener("click", openSetup);
  // New game fits the game chosen: the player counts it takes, a name (and an empire where it has them) per seat
  let gameList = [];
  async function openSetup() {
    gameList = await (await fetch("/api/games")).json();
    const sel = $("setup-game");
    sel.replaceChildren(...gameList.map((g) => el("option", { value: g.name, selected: state && g.name === state.game }, g.title)));
    sel.onchange = syncSetup;
    $("setup-players").onchange = drawSeats;
    $("setup-more").onchange = showWhen;
    syncSetup();
    $("setup-error").textContent = "";
    $("setup").showModal();
  }
  // the options the form's choices give so far, and a control shown only where its `when` matches them
  function chosenOptions(g) {
    const options = {};
    for (const control of $("setup-more").querySelectorAll(".setup-option")) {
      const o = g.setup_options[Number(control.dataset.index)];
      if (o.kind === "choice") Object.assign(options, o.choices[Number(control.value)].options);
    }
    return options;
  }
  const applies = (o, options) => !o.when || Object.entries(o.when).every(([k, v]) => options[k] === v);
  function showWhen() {
    const g = chosenGame();
    const options = chosenOptions(g);
    for (const control of $("setup-more").querySelectorAll(".setup-option")) {
      const o = g.setup_options[Number(control.dataset.index)];
      (control.closest("label.option") || control).hidden = !applies(o, options);
    }
  }
  function chosenGame() { return gameList.find((g) => g.name === $("setup-game").value) || gameList[0]; }
  function syncSetup() {
    const g = chosenGame();
    $("setup-bd").hidden = g.name !== "balance_duels";
    $("setup-imp").hidden = g.name !== "imperial";
    const count = $("setup-players");
    const keep = Number(count.value);
    const counts = [];
    for (let n = g.seats.min; n <= g.seats.max; n++) counts.push(n);
    count.replaceChildren(...counts.map((n) => el("option", { value: n, selected: n === (counts.includes(keep) && keep !== 0 ? keep : g.seats.usual) },
      n === g.seats.usual ? `${n} (usual)` : String(n))));
    count.disabled = counts.length === 1;
    if (count.disabled) count.dataset.why = `${g.title} is for ${g.seats.min} players`; else delete count.dataset.why;
    drawSeats();
    // the game's variants and house rules, each with a line on what it does
    $("setup-more").replaceChildren(...(g.setup_options || []).map((o, i) => {
      const help = el("span", { class: "small option-help", id: `setup-help-${i}` }, o.help);
      if (o.kind === "bool") {
        return el("label", { class: "option" }, el("input", { type: "checkbox", class: "setup-option", "data-index": i,
          checked: !!o.default, "aria-describedby": `setup-help-${i}` }), ` ${o.label}`, help);
      }
      if (o.kind === "pick") {
        return el("fieldset", { class: "option setup-option seats", "data-index": i, "aria-describedby": `setup-help-${i}` },
          el("legend", {}, o.label), help, ...o.choices.map((c) => el("label", { class: "pick" },
            el("input", { type: "checkbox", value: c.value }), ` ${c.label}`)));
      }
      return el("label", { class: "option" }, `${o.label} `, el("select", { class: "setup-option", "data-index": i, "aria-describedby": `setup-help-${i}` },
        o.choices.map((c, k) => el("option", { value: k }, c.label))), help);
    }));
    showWhen();
  }
  function drawSeats() {
    const g = chosenGame();
    const n = Number($("setup-players").value);
    const box = $("setup-seats");
    const old = [...box.querySelectorAll(".seat-name")].map((i) => i.value);
    const choice = g.seat_choice;
    const rows = [];
    for (let i = 0; i < n; i++) {
      const name = el("input", { type: "text", class: "seat-name", maxlength: 24, "aria-label": `player ${i + 1}'s name`,
        placeholder: g.default_names ? g.default_names[i] : `Player ${i + 1}`, value: old[i] || null });
      const pick = choice ? el("select", { class: "seat-choice", "aria-label": `player ${i + 1}'s ${choice.label}` },
        choice.options.map((o, k) => el("option", { value: o.value, selected: k === i }, o.label))) : null;
      const colour = g.colours && g.colours.length ? el("select", { class: "seat-colour", "aria-label": `player ${i + 1}'s colour` },
        g.colours.map((c, k) => el("option", { value: c, selected: k === i % g.colours.length }, c))) : null;
      rows.push(el("div", { class: "seat" }, el("span", { class: "seat-no" }, `${i + 1}.`), name, pick, colour));
    }
    const what = ["names", choice ? `${choice.label}s` : null, g.colours && g.colours.length ? "colours" : null].filter(Boolean);
    box.replaceChildren(el("legend", {}, `${what.join(", ").replace(/^./, (c) => c.toUpperCase())} (seating order)`), ...rows);
    if (g.name === "balance_duels") duelPawns(n);
  }
  // Balance Duels' pawns follow the count: a choice for two players, two L and two M each for more; teams for four
  function duelPawns(n) {
    const pawns = $("setup-pawns"), teams = $("setup-teams");
    $("setup-pawns-for").textContent = `${n} players`;
    const was = pawns.value || "6";
    pawns.replaceChildren(...(n === 2 ? ["6", "5", "4"].map((v) => el("option", { value: v, selected: v === was }, v))
      : [el("option", { value: "" }, "2 L and 2 M")]));
    pawns.disabled = n !== 2;
    if (pawns.disabled) pawns.dataset.why = `with ${n} players each plays 2 L and 2 M pawns`; else delete pawns.dataset.why;
    teams.disabled = n !== 4;
    if (teams.disabled) { teams.checked = false; teams.dataset.why = "the team game is for 4 players"; } else delete teams.dataset.why;
  }
  $("setup-form").addEventListener("submit", async (ev) => {
    if (ev.submitter && ev.submitter.value !== "go") return;
    ev.preventDefault();
    const f = ev.target;
    const g = chosenGame();
    const game = g.name;
    const seats = [...$("setup-seats").querySelectorAll(".seat")].map((row, i) => ({
      name: row.querySelector(".seat-name").value.trim() || (g.default_names ? g.default_names[i] : `Player ${i + 1}`),
      choice: row.querySelector(".seat-choice") ? row.querySelector(".seat-choice").value : null,
      colour: row.querySelector(".seat-colour") ? row.querySelector(".seat-colour").value : null }));
    const names = seats.map((x) => x.name);
    if (new Set(names).size !== names.length) { $("setup-error").textContent = "Two players have the same name: give each their own"; return; }
    const colours = seats.map((x) => x.colour).filter(Boolean);
    if (new Set(colours).size !== colours.length) { $("setup-error").textContent = "Two players have the same colour: give each their own"; return; }
    const options = {};
    if (game === "balance_duels") {
      Object.assign(options, { players: seats.length, names, tip_judge: f.tip_judge.value, cant_play: f.cant_play.value,
        pass_needs_roll: f.pass_needs_roll.checked, optional_beat: f.optional_beat.checked, teams: f.teams.checked });
      if (seats.length === 2) options.pawns = Number(f.pawns.value);
    } else if (g.seat_choice) {
      options.players = seats.map((x) => ({ name: x.name, [g.seat_choice.key]: x.choice, ...(x.colour ? { colour: x.colour } : {}) }));
    } else if (game === "global_powers") {
      options.players = seats.map((x) => ({ name: x.name, colour: x.colour }));
    } else {
      options.players = names;
      if (game === "risk") options.colours = Object.fromEntries(seats.map((x) => [x.name, x.colour]));
      if (game === "imperial") {
        options.variant = f.variant.value;
        if (f.random_deal.checked) options.deal = "random";
      }
    }
    const chosen = chosenOptions(g);
    for (const control of $("setup-more").querySelectorAll(".setup-option")) {
      const o = g.setup_options[Number(control.dataset.index)];
      if (!applies(o, chosen)) continue;
      if (o.kind === "bool") options[o.key] = control.checked;
      else if (o.kind === "pick") {
        const picked = [...control.querySelectorAll("input:checked")].map((x) => x.value);
        if (picked.length !== o.count) { $("setup-error").textContent = `${o.label}: tick ${o.count}, not ${picked.length}`; return; }
        options[o.key] = picked;
      } else Object.assign(options, o.choices[Number(control.value)].options);
    }
    try {
      await post("/api/new_game", { game, options });
      $("setup").close();
      // the new game's first prompt and controls are at the top: a page left scrolled down would hide them
      window.scrollTo({ top: 0 });
    } catch (e) { $("setup-error").textContent = e.message; }
  });

  // ---------------------------------------------------------------- calibration (the same steps as `companion calibrate`)
  let calTimer = null;
  async function calAction(action, body) {
    $("cal-msg").textContent = "";
    try { drawCal(await post(`/api/calibration/${action}`, body || {})); }
    catch (e) { $("cal-msg").textContent = e.message; }
  }
  function drawCal(st) {
    clearTimeout(calTimer);
    if (!st.active) { $("cal-body").replaceChildren(); return; }
    if (st.result) $("cal-msg").textContent = (st.result.ok ? "✓ " : "✕ ") + st.result.message;
    $("cal-save").hidden = !st.complete;
    $("cal-body").replaceChildren(el("ol", { class: "cal-steps" }, st.steps.map((step) => {
      const busy = st.capturing === step.id;
      const holder = step.needs.includes("holder") ? el("input", { type: "text", class: "cal-holder", placeholder: "holder, e.g. E4", "aria-label": "holder" }) : null;
      return el("li", { class: step.done ? "done" : "" },
        el("b", {}, (step.done ? "✓ " : "") + step.title), el("p", { class: "small" }, step.instructions),
        holder,
        busy ? el("progress", { max: 1, value: st.progress.fraction }) : el("button", { class: "btn", type: "button", disabled: !!st.capturing,
          "data-why": st.capturing ? "another step is capturing" : null,
          onclick: () => calAction("begin", { step: step.id, mass_g: Number($("cal-mass").value), holder: holder && holder.value ? holder.value : undefined }) },
          step.done ? "Again" : step.id === "holder" && step.result && step.result.ok ? "Next holder" : "Begin"),
        // the walk through the holders reports each holder as it goes: a measured one is no error
        step.result && !step.done ? el("p", { class: step.result.ok ? "small" : "error" }, step.result.message) : null);
    })));
    if (st.capturing) {
      calTimer = setTimeout(async () => {
        const now = await (await fetch("/api/calibration")).json();
        if (now.ready) calAction("finish"); else drawCal(now);
      }, 400);
    }
  }
  $("btn-cal").addEventListener("click", async () => {
    $("cal").showModal();
    const st = await (await fetch("/api/calibration")).json();
    if (st.error) { $("cal-msg").textContent = st.error; return; }
    if (st.active) drawCal(st); else calAction("start", { known_mass_g: Number($("cal-mass").value) });
  });
  $("cal-close").addEventListener("click", () => { clearTimeout(calTimer); $("cal").close(); });
  $("cal-save").addEventListener("click", async () => {
    try { const r = await post("/api/calibration/save", {}); $("cal-msg").textContent = "✓ " + r.message; }
    catch (e) { $("cal-msg").textContent = e.message; }
  });

  let resized = null;
  window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(() => { if (state) render(); }, 150); });

  if ("wakeLock" in navigator) {
    const lock = () => navigator.wakeLock.request("screen").catch(() => {});
    lock();
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") lock(); });
  }

  // how a tablet joins: the Pi's address as text and QR code (made by the daemon), and a word when no PIN guards it
  fetch("/api/join").then((r) => r.json()).then((j) => {
    const card = $("join-card");
    card.hidden = false;
    if (!j.wifi) {
      $("join-qr").remove();
      $("join-url").textContent = "This companion listens on this machine only: start it with --host 0.0.0.0 to join from a tablet.";
      return;
    }
    $("join-qr").src = "/api/join.svg";
    $("join-qr").alt = `QR code of ${j.urls[0]}`;
    $("join-url").textContent = j.urls.join(" or ");
    $("join-warn").hidden = j.pin;
  }).catch(() => {});
  fetch("/api/session").then((r) => r.json()).then((s) => { csrf = s.csrf; }).catch(() => {});
  fetch("/api/state").then((r) => r.json()).then(apply).catch(showError).finally(connect);
})();
