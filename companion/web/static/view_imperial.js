/* Imperial 2030 table view: rondel, treasuries, power track, bonds and the controls for the next step.
   Plain browser JavaScript: no libraries, no build step, no requests except through api.act. */
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  // colour helps, but every nation also carries its two-letter code
  const NATIONS = {
    russia: { code: "RU", colour: "#b48cff" },
    china: { code: "CN", colour: "#ffd400" },
    india: { code: "IN", colour: "#ff9f40" },
    brazil: { code: "BR", colour: "#5ce1b0" },
    united_states: { code: "US", colour: "#4aa8ff" },
    europe: { code: "EU", colour: "#e8e8e8" },
  };
  const ORDER = ["russia", "china", "india", "brazil", "united_states", "europe"];

  // what the player has picked but not yet sent, forgotten whenever the game moves on
  const ui = { key: null, investNation: null, produce: null, imports: [],
    battle: { against: null, unit: "army", theirs: "army" }, occupyOwner: null };

  function h(tag, attrs, ...children) {
    const node = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.setAttribute("class", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "style") Object.keys(v).forEach(function (prop) { node.style.setProperty(prop, String(v[prop])); });  // CSSOM, one property each: no style attribute (CSP), and a value is never read as more declarations
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c.nodeType ? c : String(c));
    }
    return node;
  }

  function code(id) { return (NATIONS[id] || { code: id }).code; }
  function nationName(view, id) {
    const n = view.nations.find((x) => x.id === id);
    return n ? n.name : id;
  }
  function money(n) { return `${n} M`; }
  // a secret figure is shown as such, never as a number the table could mistake for the real one
  function secret(hidden, text) { return hidden ? h("span", { class: "imp-hidden-cash" }, "hidden") : text; }

  function button(label, action, api, opts) {
    const o = opts || {};
    return h("button", {
      class: "imp-btn" + (o.primary ? " imp-primary" : "") + (o.small ? " imp-small" : ""),
      type: "button",
      disabled: o.disabled || null,
        "data-why": o.disabled && o.why ? o.why : null,
      title: o.title || null,
      "aria-label": o.aria || null,
      onclick: action ? () => send(api, action) : o.onclick,
    }, label);
  }

  function send(api, action) {
    return api.act(action).catch(api.refused);
  }

  function marker(id, x, y, r, fontSize) {
    const g = h("svg:g", { class: "imp-marker" });
    const fs = fontSize || r * 0.95;
    g.append(h("svg:circle", { cx: x, cy: y, r: r, fill: NATIONS[id] ? NATIONS[id].colour : "#888", stroke: "#000", "stroke-width": 2 }));
    g.append(h("svg:text", { x: x, y: y + fs * 0.38, "text-anchor": "middle", class: "imp-marker-text", "font-size": fs }, code(id)));
    return g;
  }

  // ------------------------------------------------------------- the rondel
  function polar(cx, cy, r, deg) {
    const a = (deg * Math.PI) / 180;
    return [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  }

  function sectorPath(cx, cy, r1, r2, a1, a2) {
    const [x1, y1] = polar(cx, cy, r2, a1);
    const [x2, y2] = polar(cx, cy, r2, a2);
    const [x3, y3] = polar(cx, cy, r1, a2);
    const [x4, y4] = polar(cx, cy, r1, a1);
    return `M${x1},${y1} A${r2},${r2} 0 0 1 ${x2},${y2} L${x3},${y3} A${r1},${r1} 0 0 0 ${x4},${y4} Z`;
  }

  function rondel(view, api) {
    const size = 440, cx = size / 2, cy = size / 2, outer = 214, inner = 72;
    const svg = h("svg:svg", { viewBox: `0 0 ${size} ${size}`, class: "imp-rondel-svg", role: "group",
      "aria-label": "rondel with each nation's position and the cost of each reachable space" });
    const options = {};
    for (const o of view.rondel.options) options[o.target] = o;
    const mover = view.to_move;
    const moverAt = mover ? view.rondel.positions[mover] : null;
    const defs = h("svg:defs", {});
    defs.append(h("svg:pattern", { id: "imp-hatch", width: 10, height: 10, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      h("svg:rect", { width: 10, height: 10, fill: "#1b2229" }), h("svg:line", { x1: 0, y1: 0, x2: 0, y2: 10, stroke: "#8a96a3", "stroke-width": 4 })));
    svg.append(defs);
    view.rondel.spaces.forEach((space, i) => {
      const mid = -90 + i * 45;
      const opt = view.phase === "rondel" ? options[space.id] : null;
      // null: the government's cash is hidden, so only the engine can say whether it is enough
      const reachable = opt && !opt.blocked && !opt.shortfall;
      const cls = ["imp-sector", `imp-space-${space.id.replace(/\d$/, "")}`];
      if (opt) cls.push(reachable ? "imp-reachable" : "imp-unaffordable");
      if (opt && opt.blocked) cls.push("imp-blocked");
      if (space.id === moverAt) cls.push("imp-current");
      const g = h("svg:g", { class: cls.join(" "), tabindex: reachable ? 0 : null, role: reachable ? "button" : null,
        "aria-label": opt ? `${space.name}: ${opt.cost ? money(opt.cost) : "free"}` : space.name,
        onclick: reachable ? () => send(api, { type: "rondel", nation: mover, target: space.id }) : null,
        onkeydown: reachable ? (e) => { if (e.key === "Enter" || e.key === " ") send(api, { type: "rondel", nation: mover, target: space.id }); } : null });
      g.append(h("svg:path", { d: sectorPath(cx, cy, inner, outer, mid - 22.5, mid + 22.5), class: "imp-sector-bg",
        fill: opt && opt.blocked ? "url(#imp-hatch)" : null }));
      // name and cost sit one above the other, horizontally, where even the side sectors are wide enough
      const [lx, ly] = polar(cx, cy, outer - 52, mid);
      g.append(h("svg:text", { x: lx, y: ly - 2, "text-anchor": "middle", class: "imp-sector-name" }, space.name));
      if (opt) {
        const text = opt.blocked ? "blocked" : (opt.cost ? money(opt.cost) : "free") + (opt.passes_investor ? " ⟳$" : "");
        g.append(h("svg:text", { x: lx, y: ly + 21, "text-anchor": "middle", class: "imp-sector-cost" }, text));
      }
      const here = ORDER.filter((n) => view.rondel.positions[n] === space.id);
      here.forEach((n, k) => {
        const row = k < 3 ? 0 : 1;
        const inRow = row === 0 ? Math.min(here.length, 3) : here.length - 3;
        const idx = row === 0 ? k : k - 3;
        const angle = mid + (idx - (inRow - 1) / 2) * 15;
        const [mx, my] = polar(cx, cy, inner + 20 + row * 27, angle);
        // the code at 15.5 units: 12 px where a phone draws the rondel 350 px wide
        g.append(marker(n, mx, my, 14, 15.5));
      });
      svg.append(g);
    });
    const unplaced = ORDER.filter((n) => view.rondel.positions[n] === null);
    svg.append(h("svg:circle", { cx, cy, r: inner - 4, class: "imp-hub" }));
    if (mover) {
      svg.append(marker(mover, cx, cy - (unplaced.length ? 34 : 20), unplaced.length ? 17 : 20));
      svg.append(h("svg:text", { x: cx, y: cy + (unplaced.length ? 0 : 20), "text-anchor": "middle", class: "imp-hub-text" },
        view.phase === "rondel" ? "to move" : "acting"));
    }
    if (unplaced.length) {
      svg.append(h("svg:text", { x: cx, y: cy + (mover ? 20 : 0), "text-anchor": "middle", class: "imp-hub-small" }, "not placed:"));
      // three codes a line: the hub is narrow
      for (let k = 0; k < unplaced.length; k += 3) {
        svg.append(h("svg:text", { x: cx, y: cy + (mover ? 38 : 18) + (k / 3) * 17, "text-anchor": "middle", class: "imp-hub-small" },
          unplaced.slice(k, k + 3).map(code).join(" ")));
      }
    }
    return svg;
  }

  function rondelButtons(view, api) {
    if (view.phase !== "rondel") return null;
    const mover = view.to_move;
    const spaces = {};
    for (const s of view.rondel.spaces) spaces[s.id] = s.name;
    return h("div", { class: "imp-choices" }, view.rondel.options.map((o) => {
      const notes = [];
      notes.push(o.cost ? money(o.cost) : "free");
      if (o.distance) notes.push(`${o.distance} space${o.distance > 1 ? "s" : ""}`);
      if (o.passes_investor) notes.push(o.swiss_bank_may_block ? "passes Investor · Swiss bank may block" : "passes Investor");
      if (o.target === "investor" && o.needs > o.cost) notes.push(`${money(o.needs - o.cost)} unpaid interest`);
      if (o.blocked) notes.push("blocked by a Swiss bank");
      if (o.shortfall) notes.push(`short ${money(o.shortfall)}`);
      return button(h("span", {}, h("strong", {}, spaces[o.target]), h("span", { class: "imp-note" }, notes.join(" · "))),
        { type: "rondel", nation: mover, target: o.target }, api, { disabled: o.blocked || o.shortfall > 0,
          why: o.blocked ? "a Swiss bank stopped this nation from passing Investor" :
            `${view.acting_player} is short ${money(o.shortfall)}` });
    }));
  }

  // -------------------------------------------------------------- controls
  function controls(view, api) {
    const box = h("section", { class: "imp-card imp-controls", "aria-label": "what to do next" });
    box.append(h("p", { class: "imp-expected" }, view.expected));
    const mover = view.to_move;
    const nation = mover ? view.nations.find((n) => n.id === mover) : null;
    switch (view.phase) {
      case "rondel":
        box.append(rondelButtons(view, api) || "");
        break;
      case "pass_check":
        box.append(h("div", { class: "imp-choices" },
          button("No objection: let it pass", { type: "allow_pass" }, api, { primary: true }),
          view.swiss_banks_may_block.map((p) => button(`${p}: stop it at Investor`, { type: "block_pass", player: p }, api))));
        break;
      case "factory": {
        const short = nation.treasury < 5;
        box.append(h("div", { class: "imp-choices" },
          view.factory_sites.map((id) => {
            const city = nation.cities.find((c) => c.id === id);
            const kind = city.kind === "armament" ? "armament facility" : "shipyard";
            return button(`Build ${kind} in ${city.name} (${money(5)})`, { type: "build_factory", city: id }, api,
              { disabled: short, why: `a factory costs ${money(5)}; ${nation.name}'s treasury has ${money(nation.treasury)}` });
          }),
          button("Build nothing", { type: "skip" }, api)));
        // the way out, beside the greyed builds
        if (short) box.append(giftForm(view, api, { nation: nation.id, player: giver(view, nation, 5 - nation.treasury),
          amount: 5 - nation.treasury, title: `Give personal cash to ${nation.name}'s treasury` }));
        break;
      }
      case "production":
        box.append(productionControls(view, api));
        break;
      case "import":
        box.append(importControls(view, api, nation));
        break;
      case "maneuver":
        box.append(maneuverControls(view, api, nation));
        break;
      case "investor":
      case "draft":
        box.append(investControls(view, api));
        break;
      case "over":
        box.append(h("p", { class: "imp-winner" }, "Winner: " + view.winners.join(" & ")));
        break;
      default:
        break;
    }
    return box;
  }

  function stepper(label, value, max, onchange) {
    return h("div", { class: "imp-stepper" },
      h("span", { class: "imp-stepper-label" }, label),
      h("button", { class: "imp-btn imp-small", type: "button", disabled: value <= 0 || null, "aria-label": `fewer ${label}`,
        "data-why": value <= 0 ? "none" : null, onclick: () => onchange(value - 1) }, "−"),
      h("span", { class: "imp-stepper-value" }, `${value} / ${max}`),
      h("button", { class: "imp-btn imp-small", type: "button", disabled: value >= max || null, "aria-label": `more ${label}`,
        "data-why": value >= max ? `${max} at most` : null, onclick: () => onchange(value + 1) }, "+"));
  }

  function productionControls(view, api) {
    const limits = view.production;
    if (!ui.produce) ui.produce = { armies: limits.armies, fleets: limits.fleets };
    const wrap = h("div", { class: "imp-choices" });
    const redraw = () => wrap.replaceChildren(...inner());
    const inner = () => [
      stepper("armies", ui.produce.armies, limits.armies, (v) => { ui.produce.armies = v; redraw(); }),
      stepper("fleets", ui.produce.fleets, limits.fleets, (v) => { ui.produce.fleets = v; redraw(); }),
      button(`Produce ${ui.produce.armies} armies and ${ui.produce.fleets} fleets`,
        { type: "produce", armies: ui.produce.armies, fleets: ui.produce.fleets }, api, { primary: true }),
      button("Produce nothing", { type: "skip" }, api),
    ];
    redraw();
    return wrap;
  }

  function importControls(view, api, nation) {
    const wrap = h("div", { class: "imp-choices" });
    const redraw = () => wrap.replaceChildren(...inner());
    const add = (u) => { if (ui.imports.length < 3) { ui.imports.push(u); redraw(); } };
    const inner = () => [
      h("p", { class: "imp-note" }, ui.imports.length ? "Chosen: " + ui.imports.join(", ") : "Choose up to 3 units, 1 M each"),
      button("+ Army", null, api, { onclick: () => add("army"), disabled: ui.imports.length >= 3, why: "3 units at most" }),
      button("+ Fleet", null, api, { onclick: () => add("fleet"), disabled: ui.imports.length >= 3, why: "3 units at most" }),
      button("Clear", null, api, { onclick: () => { ui.imports = []; redraw(); }, disabled: !ui.imports.length, why: "nothing chosen yet" }),
      button(`Import ${ui.imports.length} for ${money(ui.imports.length)}`, { type: "import", units: ui.imports.slice() }, api,
        { primary: true, disabled: ui.imports.length > nation.treasury,
          why: `${nation.name}'s treasury has ${money(nation.treasury)}` }),
      button("Import nothing", { type: "skip" }, api),
    ];
    redraw();
    return wrap;
  }

  function maneuverControls(view, api, nation) {
    const mover = nation.id;
    const others = view.nations.filter((n) => n.id !== mover);
    const box = h("div", { class: "imp-maneuver" });
    const step = (extra) => ({ type: "maneuver", done: false, ...extra });

    const flags = h("div", { class: "imp-group" }, h("h3", {}, "Flags on the board"),
      h("div", { class: "imp-flag-grid" }, view.nations.map((n) => h("div", { class: "imp-flag-row" + (n.id === mover ? " imp-me" : "") },
        h("span", { class: "imp-code" }, code(n.id)), h("span", { class: "imp-count" }, `${n.flags}/${view.limits.flags}`),
        button("−1", step({ flags: { [n.id]: -1 } }), api, { small: true, disabled: n.flags <= 0, why: "none on the board",
          aria: `${n.name}: one flag fewer` }),
        button("+1", step({ flags: { [n.id]: 1 } }), api, { small: true, disabled: n.flags >= view.limits.flags,
          why: `all ${view.limits.flags} on the board`, aria: `${n.name}: one flag more` })))));

    const battle = h("div", { class: "imp-group" });
    const drawBattle = () => {
      const b = ui.battle;
      battle.replaceChildren(h("h3", {}, "Battle (one unit each side)"),
        h("div", { class: "imp-choices" }, others.map((n) => h("button", { class: "imp-btn imp-small" + (b.against === n.id ? " imp-selected" : ""),
          type: "button", "aria-pressed": b.against === n.id ? "true" : "false",
          onclick: () => { b.against = n.id; drawBattle(); } }, `${code(n.id)} (${n.armies}A ${n.fleets}F)`))),
        h("div", { class: "imp-choices" },
          ["army", "fleet"].map((u) => h("button", { class: "imp-btn imp-small" + (b.unit === u ? " imp-selected" : ""), type: "button",
            "aria-pressed": b.unit === u ? "true" : "false", onclick: () => { b.unit = u; drawBattle(); } }, `my ${u}`)),
          ["army", "fleet"].map((u) => h("button", { class: "imp-btn imp-small" + (b.theirs === u ? " imp-selected" : ""), type: "button",
            "aria-pressed": b.theirs === u ? "true" : "false", onclick: () => { b.theirs = u; drawBattle(); } }, `their ${u}`))),
        button(b.against ? `Record: my ${b.unit} and ${code(b.against)}'s ${b.theirs} are removed` : "Record the battle",
          b.against ? step({ battles: [{ against: b.against, unit: b.unit, their_unit: b.theirs }] }) : null, api,
          { disabled: !b.against, why: "first pick the nation fought, above" }));
    };
    drawBattle();

    const occupy = h("div", { class: "imp-group" });
    const drawOccupy = () => {
      const owner = others.find((n) => n.id === ui.occupyOwner);
      occupy.replaceChildren(...[h("h3", {}, "Hostile armies enter a home city"),
        h("div", { class: "imp-choices" }, others.map((n) => h("button", { class: "imp-btn imp-small" + (ui.occupyOwner === n.id ? " imp-selected" : ""),
          type: "button", onclick: () => { ui.occupyOwner = n.id; drawOccupy(); } }, code(n.id)))),
        owner ? h("div", { class: "imp-choices" }, owner.cities.filter((c) => !c.occupiers.includes(mover)).map((c) =>
          // the factory by its kind's mark, as in the nations' table (an emoji factory is an empty box without an emoji font)
          button(`${c.name}${c.factory ? (c.kind === "armament" ? " ▲" : " ⚓") : ""}`, step({ occupy: [{ owner: owner.id, city: c.id }] }), api,
            { small: true, aria: `${c.name}${c.factory ? (c.kind === "armament" ? ", armament facility" : ", shipyard") : ""}` }))) : null]
        .filter(Boolean));
    };
    drawOccupy();

    const standing = [];
    for (const n of view.nations) {
      for (const c of n.cities) {
        for (const o of c.occupiers) {
          if (o === mover || n.id === mover) standing.push({ owner: n, city: c, occupier: o });
        }
      }
    }
    const leave = standing.length ? h("div", { class: "imp-group" }, h("h3", {}, "Occupations ending"),
      h("div", { class: "imp-choices" }, standing.map((s) =>
        button(`${code(s.occupier)} leaves ${code(s.owner.id)} ${s.city.name}`,
          step({ vacate: [{ owner: s.owner.id, city: s.city.id, occupier: s.occupier }] }), api, { small: true })))) : null;

    const targets = standing.filter((s) => s.occupier === mover && s.city.factory);
    const destroy = targets.length ? h("div", { class: "imp-group" }, h("h3", {}, "Destroy a factory (3 armies)"),
      h("div", { class: "imp-choices" }, targets.map((s) =>
        button(`Destroy ${code(s.owner.id)} ${s.city.name}`, step({ destroy_factories: [{ owner: s.owner.id, city: s.city.id }] }), api,
          { small: true, disabled: nation.armies < 3, why: `it takes 3 armies; ${nation.name} has ${nation.armies}` })))) : null;

    // the way on first, where the prompt is: the reports below it are only for what changed on the board
    box.append(h("div", { class: "imp-choices" }, button("End the maneuver", { type: "maneuver" }, api, { primary: true })),
      ...[flags, battle, occupy, leave, destroy].filter(Boolean));
    return box;
  }

  function investControls(view, api) {
    const d = view.decision;
    const box = h("div", { class: "imp-invest" });
    const role = d.role === "investor" ? "investor card" : d.role === "swiss_bank" ? "Swiss bank" : "bond draft";
    box.append(h("p", { class: "imp-decider" }, h("strong", {}, d.player), ` · ${role} · cash `, secret(d.cash_hidden, money(d.cash)),
      d.waiting.length ? h("span", { class: "imp-note" }, ` · then ${d.waiting.join(", ")}`) : null));
    const nations = [...new Set(d.choices.map((c) => c.nation))];
    if (!nations.includes(ui.investNation)) ui.investNation = nations.length === 1 ? nations[0] : null;
    const tabs = h("div", { class: "imp-choices" });
    const list = h("div", { class: "imp-choices" });
    const redraw = () => {
      tabs.replaceChildren(...nations.map((n) => h("button", { class: "imp-btn" + (ui.investNation === n ? " imp-selected" : ""), type: "button",
        "aria-pressed": ui.investNation === n ? "true" : "false", onclick: () => { ui.investNation = n; redraw(); } },
        h("span", { class: "imp-code" }, code(n)), " ", nationName(view, n))));
      list.replaceChildren(...d.choices.filter((c) => c.nation === ui.investNation).map((c) => {
        const label = c.trade_in === null ? `Buy ${c.value} (interest ${interestOf(view, c.value)})` : `Trade ${c.trade_in} → ${c.value}`;
        const action = { type: "invest", player: d.player, nation: c.nation, value: c.value };
        if (c.trade_in !== null) action.trade_in = c.trade_in;
        return button(h("span", {}, h("strong", {}, label), h("span", { class: "imp-note" }, `pay ${money(c.price)}`)), action, api,
          { disabled: c.affordable === false, why: `${d.player} has ${money(d.cash)}` });
      }));
    };
    redraw();
    box.append(tabs, list, h("div", { class: "imp-choices" }, button(`${d.player} does not invest`, { type: "pass", player: d.player }, api)));
    return box;
  }

  function interestOf(view, value) {
    const b = view.bonds.find((x) => x.value === value);
    return b ? b.interest : "?";
  }

  // ------------------------------------------------------------ the tables
  function powerTrack(view) {
    // one lane per nation, so markers on the same number never hide each other
    const w = 560, lane = 26, top = 30, pad = 44, max = view.limits.power_points;
    const height = top + lane * view.nations.length + 6;
    const svg = h("svg:svg", { viewBox: `0 0 ${w} ${height}`, class: "imp-track-svg", role: "img", "aria-label": "power point track" });
    const x = (p) => pad + (p / max) * (w - pad - 34);
    for (let p = 0; p <= max; p += 5) {
      svg.append(h("svg:line", { x1: x(p), y1: top - 6, x2: x(p), y2: height - 4, class: "imp-track-tick" }));
      svg.append(h("svg:text", { x: x(p), y: top - 12, "text-anchor": "middle", class: "imp-track-label" }, `${p} (×${p / 5})`));
    }
    view.nations.forEach((n, i) => {
      const y = top + lane * i + lane / 2;
      svg.append(h("svg:text", { x: 4, y: y + 6, class: "imp-track-code" }, code(n.id)));
      svg.append(h("svg:line", { x1: x(0), y1: y, x2: x(max), y2: y, class: "imp-track-line" }));
      svg.append(marker(n.id, x(n.power_points), y, 11));
    });
    return svg;
  }

  function nationsTable(view) {
    const head = ["Nation", "Government", "Treasury", "Power", "Flags", "Armies", "Fleets", "Cities", "Interest", "Next tax"];
    return h("table", { class: "imp-table" },
      h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, view.nations.map((n) => h("tr", { class: n.id === view.to_move ? "imp-me" : null },
        h("th", { scope: "row" }, h("span", { class: "imp-chip", style: { "background-color": NATIONS[n.id].colour } }, code(n.id)), " ", n.name),
        h("td", {}, n.government || h("span", { class: "imp-dim" }, "none")),
        h("td", { class: "imp-num" }, money(n.treasury)),
        h("td", { class: "imp-num" }, `${n.power_points}`, h("span", { class: "imp-dim" }, ` ×${n.power_factor}`)),
        h("td", { class: "imp-num" }, `${n.flags}`),
        h("td", { class: "imp-num" }, `${n.armies}`),
        h("td", { class: "imp-num" }, `${n.fleets}`),
        h("td", {}, h("div", { class: "imp-cities" }, n.cities.map(cityBadge))),
        h("td", { class: "imp-num" }, money(n.interest_due)),
        h("td", { class: "imp-num", title: "revenue, bonus and power points if it taxed now" },
          `${n.tax_preview.revenue} → +${n.tax_preview.power_gain}`)))));
  }

  function cityBadge(c) {
    const symbol = c.kind === "armament" ? "▲" : "⚓";
    const text = `${symbol}${c.factory ? "" : "·"}`;
    const occupied = c.occupiers.length ? ` ⚔${c.occupiers.map(code).join(",")}` : "";
    const cls = ["imp-city", c.factory ? "imp-has-factory" : "imp-no-factory", c.occupied ? "imp-occupied" : ""].join(" ");
    const words = `${c.name}: ${c.factory ? (c.kind === "armament" ? "armament facility" : "shipyard") : "no factory"}`
      + (c.occupied ? `, occupied by ${c.occupiers.join(", ")}` : "");
    return h("span", { class: cls, title: words, "aria-label": words }, text + occupied);
  }

  function cashToggle(p, api) {
    const label = p.cash_hidden ? "Show my cash" : "Hide my cash";
    return button(label, { type: "hide_cash", player: p.name, hidden: !p.cash_hidden }, api,
      { small: true, aria: `${label} (${p.name})` });
  }

  function playersTable(view, api) {
    const head = ["Player", "Cash", "Bonds (value/interest)", "Governs", "Score"];
    return h("table", { class: "imp-table" },
      h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, view.players.map((p) => h("tr", { class: p.name === view.acting_player ? "imp-me" : null },
        h("th", { scope: "row" }, p.name,
          p.investor_card ? h("span", { class: "imp-badge imp-badge-investor", title: "holds the investor card" }, "Investor card") : null,
          p.swiss_bank ? h("span", { class: "imp-badge imp-badge-swiss", title: "governs no nation" }, "Swiss bank") : null),
        h("td", { class: "imp-num" }, secret(p.cash_hidden, money(p.cash)), view.game_over ? null : cashToggle(p, api)),
        h("td", {}, h("div", { class: "imp-bonds" }, ORDER.filter((n) => p.bond_totals[n]).map((n) =>
          h("span", { class: "imp-bond" }, h("span", { class: "imp-chip", style: { "background-color": NATIONS[n].colour } }, code(n)), " ",
            p.bonds.filter((b) => b.nation === n).map((b) => `${b.value}/${b.interest}`).join(" "),
            h("span", { class: "imp-dim" }, ` Σ${p.bond_totals[n]}`))))),
        h("td", {}, p.governs.map(code).join(" ") || h("span", { class: "imp-dim" }, "—")),
        h("td", { class: "imp-num imp-score" }, secret(p.cash_hidden, String(p.score)),
          view.winners.includes(p.name) ? h("span", { class: "imp-badge imp-badge-investor" }, "winner") : null)))));
  }

  // ------------------------------------------------------ anytime actions
  function select(options, value, onchange, label) {
    const s = h("select", { class: "imp-select", "aria-label": label, onchange: (e) => onchange(e.target.value) },
      options.map(([v, t]) => h("option", { value: v, selected: v === value || null }, t)));
    return s;
  }

  // who gives first: the government if it can, else the richest shown
  function giver(view, nation, need) {
    const gov = view.players.find((p) => p.name === nation.government);
    if (gov && gov.cash !== null && gov.cash >= need) return gov.name;
    const shown = view.players.filter((p) => p.cash !== null).sort((a, b) => b.cash - a.cash);
    return shown.length && shown[0].cash >= need ? shown[0].name : nation.government;
  }

  function giftForm(view, api, gift) {
    const players = view.players.map((p) => [p.name, p.name]);
    const nations = view.nations.map((n) => [n.id, n.name]);
    const chosen = { player: gift.player || players[0][0], nation: gift.nation, amount: gift.amount };
    const amount = h("input", { type: "number", min: 1, value: chosen.amount, class: "imp-input", "aria-label": "amount in millions",
      oninput: (e) => { chosen.amount = parseInt(e.target.value, 10); } });
    return h("div", { class: "imp-form" + (gift.title ? " imp-gift" : "") },
      gift.title ? h("span", { class: "imp-note" }, gift.title + ":") : null,
      select(players, chosen.player, (v) => { chosen.player = v; }, "player who gives"),
      gift.title ? null : select(nations, chosen.nation, (v) => { chosen.nation = v; }, "nation"),
      amount,
      button(gift.title ? `Give to ${nationName(view, chosen.nation)}` : "Give", null, api,
        { onclick: () => send(api, { type: "donate", ...chosen }) }));
  }

  function extras(view, api) {
    const players = view.players.map((p) => [p.name, p.name]);
    const nations = view.nations.map((n) => [n.id, n.name]);
    const box = h("div", { class: "imp-extras" });
    if (!view.game_over) {
      box.append(h("details", { class: "imp-details" }, h("summary", {}, "Give personal cash to a treasury"),
        giftForm(view, api, { player: players[0][0], nation: nations[0][0], amount: 1 })));
    }
    box.append(correctionForm(view, api, players, nations));
    return box;
  }

  const CORRECTIONS = {
    treasury: { keys: ["nation"], value: "number", label: "Treasury (M)" },
    cash: { keys: ["player"], value: "number", label: "Player cash (M)" },
    power_points: { keys: ["nation"], value: "number", label: "Power points" },
    flags: { keys: ["nation"], value: "number", label: "Flags" },
    armies: { keys: ["nation"], value: "number", label: "Armies" },
    fleets: { keys: ["nation"], value: "number", label: "Fleets" },
    factory: { keys: ["nation", "city"], value: "bool", label: "Factory in a city" },
    occupiers: { keys: ["nation", "city"], value: "nations", label: "Hostile armies in a city" },
    rondel: { keys: ["nation"], value: "space", label: "Rondel position" },
    investor_card: { keys: [], value: "player", label: "Investor card holder" },
  };

  function correctionForm(view, api, players, nations) {
    const form = h("div", { class: "imp-form" });
    const c = { what: "treasury", nation: nations[0][0], player: players[0][0], city: "brown1", value: "" };
    const draw = () => {
      const spec = CORRECTIONS[c.what];
      const parts = [select(Object.entries(CORRECTIONS).map(([k, s]) => [k, s.label]), c.what, (v) => { c.what = v; c.value = ""; draw(); }, "what to correct")];
      if (spec.keys.includes("nation")) parts.push(select(nations, c.nation, (v) => { c.nation = v; c.city = "brown1"; draw(); }, "nation"));
      if (spec.keys.includes("player")) parts.push(select(players, c.player, (v) => { c.player = v; }, "player"));
      if (spec.keys.includes("city")) {
        // each nation has its own home cities on the board (China three brown, one blue)
        const home = (view.nations.find((n) => n.id === c.nation) || { cities: [] }).cities;
        parts.push(select(home.map((city) => [city.id, `${city.name} (${city.kind})`]), c.city, (v) => { c.city = v; }, "city"));
      }
      if (spec.value === "number") {
        parts.push(h("input", { type: "number", min: 0, class: "imp-input", "aria-label": "new value", value: c.value,
          oninput: (e) => { c.value = e.target.value; } }));
      } else if (spec.value === "bool") {
        parts.push(select([["true", "has a factory"], ["false", "no factory"]], c.value || "true", (v) => { c.value = v; }, "factory"));
      } else if (spec.value === "nations") {
        parts.push(h("input", { type: "text", class: "imp-input", placeholder: "e.g. china, india (empty: none)", "aria-label": "occupying nations",
          oninput: (e) => { c.value = e.target.value; } }));
      } else if (spec.value === "space") {
        parts.push(select([["", "not placed"], ...view.rondel.spaces.map((s) => [s.id, s.name])], c.value, (v) => { c.value = v; }, "space"));
      } else {
        parts.push(select(players, c.value || players[0][0], (v) => { c.value = v; }, "player"));
      }
      parts.push(button("Correct", null, api, { onclick: () => {
        if (spec.value === "number" && String(c.value).trim() === "") {
          api.refuse("Enter the corrected value first");
          return;
        }
        send(api, correction(c, spec, players));
      } }));
      form.replaceChildren(...parts);
    };
    draw();
    return h("details", { class: "imp-details" }, h("summary", {}, "Correct a count (logged as an event)"), form);
  }

  function correction(c, spec, players) {
    const action = { type: "correct", what: c.what };
    for (const k of spec.keys) action[k] = c[k];
    if (spec.value === "number") action.value = c.value === "" ? null : Number(c.value);
    else if (spec.value === "bool") action.value = (c.value || "true") === "true";
    else if (spec.value === "nations") action.value = c.value.split(",").map((s) => s.trim().toLowerCase().replace(/ /g, "_")).filter(Boolean);
    else if (spec.value === "space") action.value = c.value || null;
    else action.value = c.value || players[0][0];
    return action;
  }

  // ------------------------------------------------------------- the view
  window.COMPANION_VIEWS = window.COMPANION_VIEWS || {};
  window.COMPANION_VIEWS.imperial = function (el, view, api) {
    const key = `${view.phase}:${view.turns_taken}:${view.to_move}:${(view.decision || {}).player || ""}`;
    if (key !== ui.key) {
      // picks made for this very step on this tablet before a reload come back; any other step starts afresh
      const kept = api.kept ? api.kept("imperial-picks") : null;
      Object.assign(ui, { produce: null, imports: [], investNation: null, battle: { against: null, unit: "army", theirs: "army" },
        occupyOwner: null }, kept && kept.key === key ? kept : {}, { key });
    }
    const swiss = view.swiss_banks.length ? view.swiss_banks.join(", ") : "none";
    const root = h("div", { class: "imp" },
      h("div", { class: "imp-top" + (view.phase === "rondel" ? "" : " imp-acting") },
        h("section", { class: "imp-card imp-rondel", "aria-label": "rondel" }, rondel(view, api)),
        controls(view, api)),
      view.last.length ? h("ul", { class: "imp-last", "aria-label": "what just happened" }, view.last.map((l) => h("li", {}, l))) : null,
      h("section", { class: "imp-card" }, h("h2", {}, "Power track"), h("div", { class: "imp-track-box" }, powerTrack(view))),
      h("section", { class: "imp-card" }, h("h2", {}, "Nations"), h("div", { class: "imp-scroll" }, nationsTable(view)),
        h("p", { class: "imp-legend" }, "▲ armament facility · ⚓ shipyard · dashed with a dot: no factory yet · ⚔ hostile armies (who) · "
          + "next tax: revenue → power points")),
      h("section", { class: "imp-card" }, h("h2", {}, "Investors"),
        h("p", { class: "imp-line" }, "Investor card: ", h("strong", {}, view.investor_card || "—"), " · Swiss banks: ", h("strong", {}, swiss)),
        h("div", { class: "imp-scroll" }, playersTable(view, api))),
      h("section", { class: "imp-card" }, h("h2", {}, "Table tools"), extras(view, api)));
    // every pick (a tab, a stepper, a unit) is kept for this step, so that a reload does not lose it
    const keep = () => { if (api.keep) api.keep("imperial-picks", ui); };
    // kept as the tap bubbles up, after the tapped control's own handler has made the pick: a reload right after
    // the tap (a deferred keep lost that race under load) brings it back. The deferred one stays for a control
    // that stops the tap on its way up
    root.addEventListener("click", keep);
    root.addEventListener("click", () => setTimeout(keep), true);
    root.addEventListener("input", keep);
    el.replaceChildren(root);
  };
})();
