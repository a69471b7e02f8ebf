/* Balance of Power (1815) - the tracker page.
 * Renders the engine's view and sends actions through api.act.
 * Plain browser JavaScript, no libraries; styles in view_balance_of_power.css (prefix "bp-"). */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var LABEL = { king: "King", general: "General", banker: "Banker" };
  var SYMBOL = { king: "\u265A", general: "\u2694", banker: "\u00A4" };
  var seenView = null;
  var pageApi = null;
  var typed = {};          // what is typed in the fields, kept on a redraw of the same state (after an error, say)
  var chosen = { pawn: "general", kind: "move", turn: null };   // the pawn and action picked, for this turn only
  var neutralFor = null;   // whose neutral empires are shown
  var mapOpen = false;     // the "Add a territory" panel stays open across redraws

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k.slice(0, 2) === "on") node[k] = v;  // a handler as a property: as an attribute it is inline script (CSP)
      else if (k === "style") Object.keys(v).forEach(function (prop) { node.style.setProperty(prop, String(v[prop])); });  // CSSOM, one property each: no style attribute (CSP), and a value is never read as more declarations
      else node.setAttribute(k, v === true ? "" : v);
    });
    [].concat(children === undefined ? [] : children).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
    return node;
  }

  function s(tag, attrs, children) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    [].concat(children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  /* (app.js shows refusals and data-why) */
  function button(label, onclick, extra) {
    var attrs = { type: "button", "class": "bp-btn", onclick: onclick };
    Object.keys(extra || {}).forEach(function (k) { attrs[k] = extra[k]; });
    return h("button", attrs, label);
  }

  function keep(input) {
    if (typed[input.name] !== undefined) input.value = typed[input.name];
    var save = function () { typed[input.name] = input.value; };
    input.addEventListener("input", save);
    input.addEventListener("change", save);
    return input;
  }

  function field(label, control) { return h("label", { "class": "bp-field" }, [h("span", {}, label), control]); }

  function pawnName(cls) { return SYMBOL[cls] + " " + LABEL[cls]; }

  /* Score bars against the winning line, each bar labelled with its number: page text, so it stays readable on a phone. */
  function scoreChart(view) {
    var target = view.points_to_win;
    var most = view.players.reduce(function (m, p) { return Math.max(m, p.score || 0); }, target || 1);
    var rows = view.players.map(function (p) {
      var pct = 100 * (p.score || 0) / most;
      return h("div", { "class": "bar-row" }, [
        h("span", { "class": "bar-name" }, p.name),
        h("span", { "class": "bar-track" }, [
          h("span", { "class": "bar-fill", style: { width: pct.toFixed(1) + "%", "background-color": p.colour || "#555" } }),
          h("span", { "class": "bar-num" }, p.score === null ? "?" : String(p.score)),
          target ? h("span", { "class": "bar-goal", style: { left: (100 * target / most).toFixed(1) + "%" } }) : null])]);
    });
    return h("div", { "class": "bar-chart", role: "img",
      "aria-label": "Scores" + (target ? " against " + target + " to win" : "") + ": " +
        view.players.map(function (p) { return p.name + " " + (p.score === null ? "unknown" : p.score); }).join(", ") },
      [target ? h("p", { "class": "bar-caption" }, "dashed line: " + target + " to win") : null].concat(rows));
  }

  function scoreboard(view) {
    var head = h("tr", {}, ["Player", "Score", "To win", "Held alone", "Full capitals", "On board (pool)", "Gone"].map(function (t) {
      return h("th", { scope: "col" }, t);
    }));
    var rows = view.players.map(function (p) {
      var active = view.turn && view.turn.player === p.name;
      var pawns = ["king", "general", "banker"].map(function (c) {
        return h("span", { "class": "bp-pawncount" }, pawnName(c) + " " + p.pawns[c] + " (" + p.pool[c] + ")");
      });
      return h("tr", { "class": active ? "bp-active" : null, "aria-current": active ? "true" : null }, [
        h("th", { scope: "row" }, [h("span", { "class": "bp-swatch", style: { "background-color": p.colour || "#777" } }), p.name,
          h("small", {}, " " + p.empire_title), active ? " \u25C0" : ""]),
        h("td", { "class": "bp-score" }, p.score === null ? "?" : String(p.score)),
        h("td", {}, p.to_win === null ? "\u2014" : String(p.to_win)),
        h("td", {}, p.territories === null ? "?" : String(p.territories)),
        h("td", {}, p.full_capitals === null ? "?" : String(p.full_capitals)),
        h("td", {}, pawns),
        h("td", {}, p.gone.length ? p.gone.map(function (c) { return "\u2716 " + LABEL[c]; }).join(", ") : "none")
      ]);
    });
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, view.points_to_win ? "Scores (" + view.points_to_win + " wins)" : "Total Domination: eliminate every other pawn"),
      scoreChart(view),
      h("table", { "class": "bp-table" }, [h("thead", {}, head), h("tbody", {}, rows)])
    ]);
  }

  function budget(view, send) {
    var left = view.turn.actions_left;
    var pills = ["king", "general", "banker"].map(function (c) {
      return h("li", { "class": left[c] ? "bp-free" : "bp-used" }, pawnName(c) + (left[c] ? " \u2014 free" : " \u2014 used"));
    });
    if (left.bonus_earned) pills.push(h("li", { "class": left.bonus ? "bp-free" : "bp-used" }, "\u2605 Bonus" + (left.bonus ? " \u2014 free" : " \u2014 used")));
    var me = view.players.filter(function (p) { return p.name === view.turn.player; })[0];
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, view.turn.player + "'s actions"),
      h("ul", { "class": "bp-pills" }, pills),
      h("p", {}, me.empire_achieved ? "Empire achieved: a fourth action of any class." :
        me.empire_blocked.length ? "Empire not achieved: " + blockText(view, me.name, me.empire_blocked) + "." :
        "Hold every territory of the empire alone to earn a fourth action."),
      // judged at the start of the turn: once an action is spent the declaration cannot change this turn's bonus
      !view.over && !view.turn.done.length && (me.empire_achieved || !me.empire_blocked.length) ?
        button(me.empire_achieved ? "Empire not held after all" : "We hold the whole empire", function () {
          send({ type: "declare_empire", player: me.name, empire: me.empire, achieved: !me.empire_achieved });
        }) : null,
      h("ol", { "class": "bp-done" }, view.turn.done.map(function (d) {
        var text = LABEL[d.pawn] + " " + d.action + (d.from ? " " + d.from : "") + (d.to && d.to !== d.from ? " \u2192 " + d.to : "") +
          (d.territory ? " in " + d.territory : "") + (d.target_player ? ", eliminating " + d.target_player + "'s " + LABEL[d.target_pawn] : "") +
          (d.slot === "bonus" ? " (bonus)" : "");
        return h("li", {}, text);
      }))
    ]);
  }

  function chart(view) {
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, "Who eliminates whom"),
      h("ul", { "class": "bp-chartlist" }, view.chart.map(function (c) {
        return h("li", {}, [h("strong", {}, pawnName(c.pawn)), " eliminates ", h("strong", {}, pawnName(c.beats))]);
      }))
    ]);
  }

  function actionForm(view, send, rerender) {
    var board = view.tracking === "board";
    var me = view.turn.player;
    var form = h("form", { "class": "bp-panel", onsubmit: function (ev) { ev.preventDefault(); } });
    form.appendChild(h("h2", {}, "Take an action"));
    form.appendChild(h("datalist", { id: "bp-territories" }, view.known_territories.map(function (t) { return h("option", { value: t }); })));
    form.appendChild(h("div", { "class": "bp-row", role: "group", "aria-label": "Pawn" }, ["king", "general", "banker"].map(function (c) {
      return button(pawnName(c), function () { chosen.pawn = c; rerender(); }, { "aria-pressed": chosen.pawn === c ? "true" : "false", "class": "bp-btn bp-toggle" });
    })));
    var kinds = ["move", "attack", "duplicate"];
    if (view.variants.respawn) kinds.push("respawn");
    form.appendChild(h("div", { "class": "bp-row", role: "group", "aria-label": "Action" }, kinds.map(function (k) {
      return button(k, function () { chosen.kind = k; rerender(); }, { "aria-pressed": chosen.kind === k ? "true" : "false", "class": "bp-btn bp-toggle" });
    })));
    var inputs = {};
    function text(name, label) {
      inputs[name] = keep(h("input", { name: name, list: "bp-territories", "class": "bp-text", autocomplete: "off" }));
      return field(label, inputs[name]);
    }
    var row = h("div", { "class": "bp-row" });
    if (board && (chosen.kind === "move" || chosen.kind === "attack")) {
      row.appendChild(text("from", "From"));
      row.appendChild(text("to", chosen.kind === "attack" ? "Into (blank: same territory)" : "To"));
    }
    if (board && (chosen.kind === "duplicate" || chosen.kind === "respawn")) row.appendChild(text("territory", "Territory"));
    var target = null;
    if (chosen.kind === "attack") {
      var prey = view.chart.filter(function (c) { return c.pawn === chosen.pawn; })[0].beats;
      target = h("select", { name: "target_player", "class": "bp-select" }, view.players.filter(function (p) { return p.name !== me; }).map(function (p) {
        return h("option", { value: p.name }, p.name);
      }));
      row.appendChild(field("Eliminate whose " + LABEL[prey] + "?", target));
    }
    form.appendChild(row);
    form.appendChild(button("Do it: " + LABEL[chosen.pawn] + " " + chosen.kind, function () {
      var action = { type: chosen.kind, pawn: chosen.pawn };
      Object.keys(inputs).forEach(function (k) { var v = inputs[k].value.trim(); if (v) action[k] = v; });
      if (target) {
        action.target_player = target.value;
        action.target_pawn = view.chart.filter(function (c) { return c.pawn === chosen.pawn; })[0].beats;
      }
      send(action);
    }, { "class": "bp-btn bp-primary" }));
    return form;
  }

  function setupForm(view, send) {
    var player = view.setup_player;
    var row = h("div", { "class": "bp-row" });
    var where = keep(h("input", { name: "territory", list: "bp-territories", "class": "bp-text" }));
    row.appendChild(field("Territory of " + player + "'s empire", where));
    ["king", "general", "banker"].forEach(function (c) {
      row.appendChild(button("Place " + pawnName(c), function () { send({ type: "place", pawn: c, territory: where.value.trim() }); }));
    });
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, "Set-up: " + player + " places the second King, General and Banker"),
      h("datalist", { id: "bp-territories" }, view.known_territories.map(function (t) { return h("option", { value: t }); })),
      row
    ]);
  }

  function countsForm(view, send) {
    var box = h("details", { "class": "bp-panel" }, h("summary", {}, "Enter territories and capitals (counts tracking)"));
    view.players.forEach(function (p) {
      var t = h("input", { type: "number", min: 0, value: p.territories === null ? "" : p.territories, "class": "bp-num", name: "territories" });
      var c = h("input", { type: "number", min: 0, max: 6, value: p.full_capitals === null ? "" : p.full_capitals, "class": "bp-num", name: "full_capitals" });
      box.appendChild(h("div", { "class": "bp-row" }, [
        h("strong", {}, p.name), field("Held alone", t), field("Full capitals", c),
        button("Save", function () {
          var action = { type: "set_counts", player: p.name };
          if (t.value !== "") action.territories = parseInt(t.value, 10);
          if (c.value !== "") action.full_capitals = parseInt(c.value, 10);
          send(action);
        }, { "class": "bp-btn bp-primary" })
      ]));
    });
    if (view.variants.tougher_neutral) box.appendChild(h("p", {}, "Tougher neutral empires: count a neutral capital's 3 extra points only once that empire is achieved."));
    return box;
  }

  function boardList(view) {
    if (view.tracking !== "board") return null;
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, "Board"),
      h("table", { "class": "bp-table" }, [
        h("thead", {}, h("tr", {}, [h("th", { scope: "col" }, "Territory"), h("th", { scope: "col" }, "Pawns"), h("th", { scope: "col" }, "Held by")])),
        h("tbody", {}, view.board.map(function (t) {
          var capital = Object.keys(view.capitals).some(function (e) { return view.capitals[e] === t.territory; });
          return h("tr", {}, [
            h("th", { scope: "row" }, t.territory + (capital ? " \u2691" : "")),
            h("td", {}, t.pawns.map(function (p) { return p.player + " " + pawnName(p.pawn); }).join(", ")),
            h("td", {}, t.controller || "contested")
          ]);
        }))
      ])
    ]);
  }

  /* Where the board shows why an empire is not achieved: another player's pawn, or (the "held" reading) a territory empty. */
  function blockText(view, player, blocked) {
    var enemy = blocked.filter(function (b) { return b.why === "enemy"; }).map(function (b) { return b.territory; });
    var empty = blocked.filter(function (b) { return b.why === "empty"; }).map(function (b) { return b.territory; });
    var parts = [];
    if (enemy.length) parts.push("another player's pawn stands in " + enemy.join(", "));
    if (empty.length) parts.push("no pawn of " + player + "'s in " + empty.join(", "));
    return parts.join("; ");
  }

  /* Tougher Neutral Empires: a neutral capital's 3 extra points count only once its empire is achieved. The map data
   * does not list every territory, so the table says when a player holds a neutral empire alone; the board can still
   * say no (an enemy pawn in a territory it knows). */
  function neutralPanel(view, send, rerender) {
    var who = view.players.filter(function (p) { return p.name === neutralFor; })[0] ||
      view.players.filter(function (p) { return view.turn && p.name === view.turn.player; })[0] || view.players[0];
    if (!who.neutral.length) return null;
    var pick = h("select", { name: "neutral_player", "class": "bp-select" }, view.players.map(function (p) {
      return h("option", { value: p.name, selected: p.name === who.name }, p.name);
    }));
    pick.onchange = function () { neutralFor = pick.value; rerender(); };
    var list = h("ul", { "class": "bp-neutral" }, who.neutral.map(function (n) {
      var status, act = null;
      if (n.achieved) status = "achieved: a full " + n.capital + " scores its 3 extra points";
      else if (n.declared) status = "said to be held, but " + blockText(view, who.name, n.blocked);
      else if (n.blocked.length) status = "not yet: " + blockText(view, who.name, n.blocked);
      else status = "not achieved";
      if (!n.judged_by_board) {
        if (n.declared) act = button("Not held after all", function () {
          send({ type: "declare_empire", player: who.name, empire: n.empire, achieved: false });
        });
        else if (!n.blocked.length) act = button(who.name + " holds all of it alone", function () {
          send({ type: "declare_empire", player: who.name, empire: n.empire, achieved: true });
        }, { "class": "bp-btn bp-primary" });
      }
      return h("li", {}, [h("strong", {}, n.title), " (capital " + n.capital + "): " + status + ". ", act]);
    }));
    return h("section", { "class": "bp-panel" }, [
      h("h2", {}, "Neutral empires"),
      h("p", {}, "Tougher neutral empires: a neutral capital with a King, General and Banker scores its 3 extra points only " +
        "for a player who has achieved that empire."),
      h("div", { "class": "bp-row" }, field("Player", pick)),
      list
    ]);
  }

  function knownKey(name) {
    var words = name.trim().toLowerCase().split(/\s+/);
    if (words[0] === "the") words.shift();
    return words.join(" ");
  }

  /* Board tracking: a printed territory the map data lacks (added once), and how the table reads Achieving Empire. */
  function mapPanel(view, send) {
    var box = h("details", { "class": "bp-panel", open: mapOpen }, h("summary", {}, "Add a territory, or how empires are judged"));
    // (the toggle event comes a task later: a redraw before it, from a choice made at once or a live update, would shut the box)
    box.firstChild.addEventListener("click", function () { mapOpen = !box.open; });
    box.addEventListener("toggle", function () { mapOpen = box.open; });
    var name = keep(h("input", { name: "new_territory", "class": "bp-text", autocomplete: "off", maxlength: 40 }));
    var empire = h("select", { name: "new_territory_empire", "class": "bp-select" }, [h("option", { value: "" }, "none (outside the six empires)")]
      .concat(Object.keys(view.empires).map(function (e) { return h("option", { value: e }, view.empires[e].title); })));
    keep(empire);
    box.appendChild(h("h3", {}, "Add a territory"));
    box.appendChild(h("p", {}, "For a territory printed on the board that the list does not know yet. It is added once, so check the spelling."));
    box.appendChild(h("div", { "class": "bp-row" }, [field("Territory", name), field("Part of", empire),
      button("Add it", function (ev) {
        var text = name.value.trim().split(/\s+/).join(" ");
        if (!text) return warnAt(ev, "Type the territory's name as printed on the board.");
        var same = view.known_territories.filter(function (t) { return knownKey(t) === knownKey(text); })[0];
        if (same) return warnAt(ev, same + " is already on the map.");
        return send({ type: "add_territory", territory: text, empire: empire.value || null });
      }, { "class": "bp-btn bp-primary" })]));
    var added = Object.keys(view.added_territories);
    if (added.length) {
      box.appendChild(h("p", {}, "Added at this table: " + added.map(function (t) {
        var e = view.added_territories[t];
        return t + (e ? " (" + view.empires[e].title + ")" : "");
      }).join(", ") + "."));
    }
    var READING = { no_enemy: "no other player's pawn in any of its territories (an empty one is fine)",
      held: "one of the player's own pawns in every territory of it" };
    var other = view.empire_rules.filter(function (r) { return r !== view.empire_rule; })[0];
    box.appendChild(h("h3", {}, "Achieving an empire"));
    box.appendChild(h("p", {}, "Judged at the start of each turn. This table reads it as: " + (READING[view.empire_rule] || view.empire_rule) + "."));
    if (other) {
      box.appendChild(h("div", { "class": "bp-row" }, button("Read it as: " + (READING[other] || other), function () {
        send({ type: "set_empire_rule", empire_rule: other });
      })));
    }
    return box;
  }

  /* A check of the page's own, refused before anything is sent: shown like the daemon's refusals, beside the button. */
  function warnAt(ev, text) {
    if (pageApi) pageApi.refuse(text);
  }

  function render(el, view, api) {
    var rerender = function () { render(el, view, api); };
    pageApi = api;
    var send = function (action) { return api.act(action).catch(api.refused); };
    var root = h("div", { "class": "bp-root" });
    var header = h("header", { "class": "bp-header" }, [
      h("h1", {}, view.title),
      view.turn ? h("p", { "class": "bp-turn" }, "Round " + view.turn.round + " \u00B7 " + view.turn.player + "'s turn") : null,
      h("p", { "class": "bp-message", role: "status" }, view.message)
    ]);
    root.appendChild(header);
    // (a star, not an emoji trophy: a Chromium without an emoji font draws that as an empty box)
    if (view.over) root.appendChild(h("p", { "class": "bp-winner" }, view.winner ? "\u2605 " + view.winner + " wins" : "Draw"));
    // the turn's own controls first; the standings and references after them
    var cols = h("div", { "class": "bp-columns" });
    if (view.phase === "setup" && !view.over) cols.appendChild(setupForm(view, send));
    if (view.phase === "play" && view.turn) {
      if (!view.over) cols.appendChild(actionForm(view, send, rerender));
      cols.appendChild(budget(view, send));
    }
    root.appendChild(cols);
    if (view.phase === "play" && !view.over) {
      root.appendChild(h("div", { "class": "bp-row bp-endbar" }, button("End turn", function () { send({ type: "end_turn" }); }, { "class": "bp-btn bp-primary bp-end" })));
    }
    if (view.phase === "play" && !view.over) {
      var neutral = neutralPanel(view, send, rerender);
      if (neutral) root.appendChild(neutral);
    }
    root.appendChild(scoreboard(view));
    var refs = h("div", { "class": "bp-columns" });
    refs.appendChild(chart(view));
    var board = boardList(view);
    if (board) refs.appendChild(board);
    root.appendChild(refs);
    if (view.tracking === "counts" && !view.over) root.appendChild(countsForm(view, send));
    if (view.tracking === "board" && !view.over) root.appendChild(mapPanel(view, send));
    if (window.COMPANION_MAP_FORM && view.map) root.appendChild(window.COMPANION_MAP_FORM(view, api, "bp"));
    el.replaceChildren(root);
    // as the shell does after its own drawing: a table that scrolls sideways takes the keyboard's focus (this view redraws itself too)
    el.querySelectorAll("table").forEach(function (t) {
      if (t.scrollWidth > t.clientWidth + 1) t.setAttribute("tabindex", "0"); else t.removeAttribute("tabindex");
    });
  }

  window.COMPANION_VIEWS = window.COMPANION_VIEWS || {};
  window.COMPANION_VIEWS.balance_of_power = function (el, view, api) {
    if (view !== seenView) {
      // a new state (from this tablet, another one or the buttons): what was typed for the old one goes
      seenView = view;
      typed = {};
    }
    // the next player starts from the page's defaults, not from the pawn and action the last one picked
    var turn = view.turn ? view.turn.number + ":" + view.turn.player : null;
    if (chosen.turn !== turn) chosen = { pawn: "general", kind: "move", turn: turn };
    render(el, view, api);
  };
})();
