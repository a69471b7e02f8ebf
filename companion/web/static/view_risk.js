/* Risk: Balance of Power - the tracker page.
 * Renders the engine's view into an element and sends actions through api.act.
 * Plain browser JavaScript, no libraries; styles in view_risk.css (prefix "rk-"). */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var seenView = null;
  var countsOpen = false;
  var countsHere = null;   // the turn whose player's counts are being entered in the "New troops" panel

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function s(tag, attrs, children) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k.slice(0, 2) === "on") node[k] = v;  // a handler as a property: as an attribute it is inline script (CSP)
      else if (k === "style") Object.keys(v).forEach(function (prop) { node.style.setProperty(prop, String(v[prop])); });  // CSSOM, one property each: no style attribute (CSP), and a value is never read as more declarations
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : v);
    });
  }

  function append(node, children) {
    [].concat(children === undefined ? [] : children).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
  }

  function pct(p) { return (100 * p).toFixed(p > 0.001 && p < 0.999 ? 1 : 0) + "%"; }
  function show(v) { return v === null || v === undefined ? "?" : String(v); }

  /* (app.js shows refusals and data-why) */
  function button(label, onclick, extra) {
    var attrs = { type: "button", "class": "rk-btn", onclick: onclick };
    Object.keys(extra || {}).forEach(function (k) { attrs[k] = extra[k]; });
    return h("button", attrs, label);
  }

  function numberInput(name, value, min, max) {
    return h("input", { type: "number", name: name, value: value === null || value === undefined ? "" : value,
      min: min, max: max, inputmode: "numeric", "class": "rk-num" });
  }

  function readNumber(form, name) {
    var field = form.querySelector('[name="' + name + '"]');
    if (!field || field.value === "") return null;
    return parseInt(field.value, 10);
  }

  function checked(form, name) {
    var field = form.querySelector('[name="' + name + '"]');
    return !!(field && field.checked);
  }

  function labelled(text, control) { return h("label", { "class": "rk-field" }, [h("span", {}, text), control]); }

  function makeSend(api) {
    var send = function (action) { return api.act(action).catch(api.refused); };
    send.fail = api.refused;
    return send;
  }

  /* A horizontal bar chart: rows of {label, p, kind}; kind picks a fill and a pattern. */
  function barChart(rows, title) {
    var rowH = 30, labelW = 150, barW = 260, width = labelW + barW + 70;
    var svg = s("svg", { viewBox: "0 0 " + width + " " + (rows.length * rowH + 8), "class": "rk-chart", role: "img", "aria-label": title });
    svg.appendChild(s("title", {}, title));
    var defs = s("defs", {}, s("pattern", { id: "rk-hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { width: 4, height: 8, "class": "rk-hatch" })));
    svg.appendChild(defs);
    var most = rows.reduce(function (m, r) { return Math.max(m, r.p); }, 0) || 1;
    rows.forEach(function (r, i) {
      var y = i * rowH + 4;
      svg.appendChild(s("text", { x: labelW - 8, y: y + rowH / 2 + 6, "text-anchor": "end", "class": "rk-chart-label" }, r.label));
      var w = Math.max(1, barW * r.p / most);
      svg.appendChild(s("rect", { x: labelW, y: y + 3, width: w, height: rowH - 8, "class": "rk-bar rk-bar-" + r.kind,
      }));
      svg.appendChild(s("text", { x: labelW + w + 6, y: y + rowH / 2 + 6, "class": "rk-chart-value" }, pct(r.p)));
    });
    return svg;
  }

  function scoreboard(view) {
    var cards = view.players.map(function (p) {
      var active = view.turn.player === p.name;
      var pips = [];
      for (var i = 0; i < view.missions_to_win; i++) {
        pips.push(h("span", { "class": "rk-pip" + (i < p.missions_done ? " rk-pip-done" : "") }, i < p.missions_done ? "\u2605" : "\u2606"));
      }
      var rows = [
        ["Territories", show(p.territories)],
        ["Cities", show(p.cities)],
        ["Troops on board", show(p.troops)],
        ["Regions", p.regions ? (p.regions.join(", ") || "none") : "?"],
        ["Capitals held", p.capitals.join(", ") || "none"],
        ["Cards", p.cards.length + " (" + p.card_stars + " stars)"]
      ];
      if (view.variant === "command_post") {
        rows.push(["Lost-troop table", String(p.lost)]);
        rows.push(["Airfield", p.airfield ? (p.airfield.territory || "built") : "none"]);
      }
      return h("section", { "class": "rk-player" + (active ? " rk-active" : ""), "aria-current": active ? "true" : null }, [
        h("h3", {}, [h("span", { "class": "rk-swatch", style: { "background-color": p.colour } }), p.name, active ? " \u25C0 to play" : ""]),
        h("div", { "class": "rk-missions-count", "aria-label": p.missions_done + " of " + view.missions_to_win + " missions" }, pips),
        h("p", { "class": "rk-capital" }, p.holds_own_capital ? "\u2714 holds own capital" : "\u2716 own capital lost"),
        h("dl", {}, rows.map(function (r) { return [h("dt", {}, r[0]), h("dd", {}, r[1])]; }).reduce(function (a, b) { return a.concat(b); }, []))
      ]);
    });
    var n = view.neutral;
    cards.push(h("section", { "class": "rk-player rk-neutral" }, [
      h("h3", {}, "Neutral army"),
      // one flat list: append() takes one level of nesting, and a nested pair stopped Command Post drawing
      h("dl", {}, [h("dt", {}, "Territories"), h("dd", {}, show(n.territories)), h("dt", {}, "Troops"), h("dd", {}, show(n.troops))].concat(
        view.variant === "command_post" ? [h("dt", {}, "Lost-troop table"), h("dd", {}, n.lost + " / " + n.table.length)] : []))
    ]));
    return h("div", { "class": "rk-scoreboard" }, cards);
  }

  function reinforcements(view, send, rerender) {
    var r = view.reinforcements;
    var box = h("section", { "class": "rk-panel" }, h("h2", {}, "New troops for " + view.turn.player + (view.reinforcements_frozen ? " (taken)" : "")));
    if (!r) {
      box.appendChild(h("p", {}, "Enter territory and city counts (and a region bonus the map does not know) to see the troops."));
      var here = view.turn.number + ":" + view.turn.player;
      if (!view.over && countsHere === here) {
        // the player's counts right here, where the player tapped (the full editor is far below the turn's controls)
        var me = view.players.filter(function (p) { return p.name === view.turn.player; })[0];
        box.appendChild(sideForm(view, { name: me.name, data: me }, send, "rk-counts-here"));
      } else if (!view.over) {
        box.appendChild(button("Enter " + view.turn.player + "'s counts", function () {
          countsHere = here;
          rerender();
          var first = document.querySelector(".rk-counts-here input");
          if (first) first.focus({ preventScroll: true });
        }, { "class": "rk-btn rk-primary" }));
      }
      return box;
    }
    var lines = [
      [r.territories + " territories + " + r.cities + " cities = " + r.counted + ", \u00F7 3 (at least 3)", r.base],
      ["Region bonuses", r.regions],
      ["Capitals held", r.capitals],
      ["Cards turned in", r.cards]
    ];
    box.appendChild(h("table", { "class": "rk-breakdown" }, [
      h("tbody", {}, lines.map(function (l) { return h("tr", {}, [h("th", { scope: "row" }, l[0]), h("td", {}, "+" + l[1])]); })),
      h("tfoot", {}, h("tr", {}, [h("th", { scope: "row" }, "Total"), h("td", {}, String(r.total))]))
    ]));
    if (!view.reinforcements_frozen && !view.over) {
      box.appendChild(button("Take " + r.total + " troops", function () { send({ type: "reinforce" }); }, { "class": "rk-btn rk-primary" }));
    }
    return box;
  }

  function cardsPanel(view, send) {
    var me = view.players.filter(function (p) { return p.name === view.turn.player; })[0];
    var box = h("section", { "class": "rk-panel" }, h("h2", {}, "Cards"));
    box.appendChild(h("p", {}, "Deck " + view.deck + ", discards " + view.discard + ". Stars to troops: " +
      view.card_table.map(function (c) { return c.stars + "\u2192" + c.troops; }).join("  ")));
    if (view.over) return box;
    var chosen = [];
    var total = h("strong", {}, "0");
    var hand = h("div", { "class": "rk-hand" }, me.cards.map(function (stars, i) {
      return h("button", { type: "button", "class": "rk-card", "aria-pressed": "false", onclick: function (ev) {
        var b = ev.currentTarget;
        var on = b.getAttribute("aria-pressed") !== "true";
        b.setAttribute("aria-pressed", on ? "true" : "false");
        if (on) chosen.push(i); else chosen.splice(chosen.indexOf(i), 1);
        total.textContent = String(chosen.reduce(function (a, j) { return a + me.cards[j]; }, 0));
      } }, stars === 2 ? "\u2605\u2605" : "\u2605");
    }));
    box.appendChild(hand);
    if (me.cards.length && view.turn.stars_turned_in === 0) {
      box.appendChild(h("p", {}, ["Selected stars: ", total, " ",
        button("Turn in selected", function () {
          send({ type: "turn_in", stars: chosen.map(function (j) { return me.cards[j]; }) });
        })]));
    }
    if (view.turn.card_due) {
      box.appendChild(h("p", { "class": "rk-due" }, ["Card earned - which did you draw? ",
        button("\u2605 1 star", function () { send({ type: "draw_card", stars: 1 }); }),
        button("\u2605\u2605 2 stars", function () { send({ type: "draw_card", stars: 2 }); })]));
    }
    return box;
  }

  function attackForm(view, send) {
    var other = view.players.filter(function (p) { return p.name !== view.turn.player; })[0].name;
    var form = h("form", { "class": "rk-panel rk-attack-form", onsubmit: function (ev) { ev.preventDefault(); } });
    form.appendChild(h("h2", {}, "Attack"));
    var defender = h("select", { name: "defender", "class": "rk-select" }, [
      h("option", { value: other }, other), h("option", { value: "neutral" }, "Neutral army")]);
    var territories = h("datalist", { id: "rk-territories" }, view.territory_names.map(function (t) { return h("option", { value: t }); }));
    form.appendChild(territories);
    form.appendChild(h("div", { "class": "rk-row" }, [
      labelled("Defender", defender),
      labelled("Armies able to attack", numberInput("attackers", 3, 1)),
      labelled("Defending armies", numberInput("defenders", 2, 1)),
      labelled("From (optional)", h("input", { name: "from", list: "rk-territories", "class": "rk-text" })),
      labelled("To (optional)", h("input", { name: "to", list: "rk-territories", "class": "rk-text" }))
    ]));
    var toggles = [
      h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "rough" }), " rough terrain"]),
      h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "attacker_airfield" }), " my airfield nearby"]),
      h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "defender_airfield" }), " their airfield nearby"])
    ];
    if (view.turn.uprisings > 0) {
      toggles.push(h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "uprising" }), " this is the uprising (neutral attacks)"]));
    }
    form.appendChild(h("div", { "class": "rk-row" }, toggles));
    form.appendChild(button("Declare attack and show odds", function () {
      var action = { type: "attack", defender: defender.value, attackers: readNumber(form, "attackers"), defenders: readNumber(form, "defenders") };
      ["from", "to"].forEach(function (k) { var v = form.querySelector('[name="' + k + '"]').value.trim(); if (v) action[k] = v; });
      if (checked(form, "rough")) action.rough = true;
      if (checked(form, "attacker_airfield")) action.attacker_airfield = true;
      if (checked(form, "defender_airfield")) action.defender_airfield = true;
      if (checked(form, "uprising")) action.uprising = true;
      send(action);
    }, { "class": "rk-btn rk-primary" }));
    return form;
  }

  /* Recon: the first `protect` attack dice are thrown again until they beat 1. */
  function rerollOnes(api, dice, protect) {
    var i = dice.slice(0, protect).indexOf(1);
    if (i < 0) return Promise.resolve(dice);
    return api.roll(1).then(function (again) {
      var next = dice.slice();
      next[i] = again[0];
      return rerollOnes(api, next, protect);
    });
  }

  function battlePanel(view, api, send) {
    var a = view.attack;
    var box = h("section", { "class": "rk-panel rk-battle" });
    var who = a.uprising ? "Neutral uprising" : a.attacker;
    box.appendChild(h("h2", {}, who + " (" + a.attackers + ") \u2192 " + (a.to || a.defender) + " (" + a.defenders + ")"));
    var tags = [];
    if (a.rough) tags.push(a.special_forces ? "rough terrain, Special Forces" : "rough terrain: 2 dice");
    if (a.attacker_airfield) tags.push("attacker airfield +1");
    if (a.defender_airfield) tags.push("defender airfield +1");
    if (a.recon) tags.push("recon: " + a.recon + " die(s) never 1");
    if (tags.length) box.appendChild(h("p", { "class": "rk-tags" }, tags.join(" \u00B7 ")));
    (a.airfield_unsure || []).forEach(function (u) {
      box.appendChild(h("p", { "class": "rk-unsure" }, "Can't tell whether " + u.player + "'s airfield" +
        (u.territory ? " in " + u.territory : " (placed without a territory)") + " reaches this battle, so it adds nothing. If it does, " +
        "call off and declare again with \u201C" + (u.flag === "attacker_airfield" ? "my" : "their") + " airfield nearby\u201D ticked."));
    });
    box.appendChild(h("p", { "class": "rk-big" }, [h("span", {}, a.uprising ? "Uprising takes it: " : "Chance to conquer: "), h("strong", {}, pct(a.conquest))]));
    if (a.expected_attacker_losses !== undefined) {
      box.appendChild(h("p", {}, "Expected attacker losses if fought to the end: " + a.expected_attacker_losses.toFixed(2)));
    }
    if (a.outcomes.length) {
      var rows = a.outcomes.slice().reverse().map(function (o) {
        return { label: o.result === "won" ? "Win, " + o.left + " left" : "Fail, " + o.left + " defend", p: o.p, kind: o.result };
      });
      box.appendChild(h("h3", {}, "How the whole attack ends"));
      box.appendChild(barChart(rows, "Distribution of attack outcomes"));
    }
    box.appendChild(h("h3", {}, "Next roll: " + a.attacker_dice + " against " + a.defender_dice + " dice"));
    box.appendChild(barChart(a.next_roll.map(function (r) {
      return { label: "Att \u2212" + r.attacker_losses + " / Def \u2212" + r.defender_losses, p: r.p,
        kind: r.defender_losses > r.attacker_losses ? "won" : (r.defender_losses < r.attacker_losses ? "lost" : "even") };
    }), "Next roll odds"));

    var ad = a.attacker_dice, dd = a.defender_dice;
    var picker = h("div", { "class": "rk-row" });
    var attCount = numberInput("attacker_count", ad, 1, ad);
    var defCount = numberInput("defender_count", dd, 1, dd);
    if (a.defender === "neutral") defCount.setAttribute("readonly", "");
    picker.appendChild(labelled("Attacker dice", attCount));
    picker.appendChild(labelled("Defender dice", defCount));
    box.appendChild(picker);
    box.appendChild(h("div", { "class": "rk-row" }, [
      // the die is drawn by the style sheet (.rk-roll): an emoji die is an empty box on a Chromium without an emoji font
      button("Roll for me", function () {
        var na = parseInt(attCount.value, 10), nd = parseInt(defCount.value, 10);
        api.roll(na + nd).then(function (values) {
          return rerollOnes(api, values.slice(0, na), Math.min(a.recon, na)).then(function (attack) {
            return send({ type: "battle", attacker_dice: attack, defender_dice: values.slice(na, na + nd) });
          });
        }).catch(send.fail);
      }, { "class": "rk-btn rk-primary rk-roll" }),
      manualDice(a, send)
    ]));
    if (!a.uprising) box.appendChild(button("Call off the attack", function () { send({ type: "stop_attack" }); }));
    if (a.rolls.length) {
      box.appendChild(h("ol", { "class": "rk-rolls" }, a.rolls.map(function (r) {
        return h("li", {}, r.attacker_dice.join("-") + " vs " + r.defender_dice.join("-") + ": attacker \u2212" + r.attacker_losses + ", defender \u2212" + r.defender_losses);
      })));
    }
    return box;
  }

  function manualDice(a, send) {
    var att = h("input", { "class": "rk-text", name: "manual_attack", placeholder: "e.g. 6 3 2", inputmode: "numeric", "aria-label": "Attacker dice" });
    var def = h("input", { "class": "rk-text", name: "manual_defend", placeholder: "e.g. 5 5", inputmode: "numeric", "aria-label": "Defender dice" });
    function parse(text) { return text.split(/[^0-9]+/).filter(Boolean).map(function (x) { return parseInt(x, 10); }); }
    return h("div", { "class": "rk-manual" }, [
      h("span", {}, "Table dice:"), att, def,
      button("Enter roll", function () { send({ type: "battle", attacker_dice: parse(att.value), defender_dice: parse(def.value) }); })
    ]);
  }

  function commandPost(view, api, send) {
    var box = h("section", { "class": "rk-panel" }, h("h2", {}, "Command Post"));
    if (view.resistance && view.turn.phase === "resistance") {
      var r = view.resistance;
      box.appendChild(h("p", {}, r.lost + " neutral troops in the table. Need " + r.needed + "+ on two dice (" + pct(r.chance) +
        ") to return " + r.would_return + "."));
      box.appendChild(h("div", { "class": "rk-row" }, [
        button("Roll resistance", function () { api.roll(2).then(function (d) { return send({ type: "neutral_resistance", roll: d }); }).catch(send.fail); }, { "class": "rk-btn rk-primary rk-roll" }),
        button("Skip (all to the box)", function () { send({ type: "neutral_resistance", decline: true }); })
      ]));
    }
    if (view.last_resistance) {
      var l = view.last_resistance;
      box.appendChild(h("p", {}, "Last resistance: rolled " + (l.roll === null ? "nothing" : l.roll) + " (needed " + l.needed + "): " +
        l.returned + " back on the board, " + l.boxed + " to the box."));
    }
    var me = view.players.filter(function (p) { return p.name === view.turn.player; })[0];
    var canBuy = ["resistance", "support"].indexOf(view.turn.phase) >= 0 && !view.over;
    box.appendChild(h("h3", {}, "Rear support (" + me.lost + " lost troops to spend)"));
    box.appendChild(h("div", { "class": "rk-shop" }, view.purchases.map(function (p) {
      return button(p.label + " \u2014 " + p.cost, function () {
        var action = { type: "buy", item: p.item };
        if (p.item === "card") {
          var stars = window.prompt("Stars on the card drawn (1 or 2)?", "1");
          if (stars === null) return;
          action.stars = parseInt(stars, 10);
        }
        if (p.item === "airfield") {
          var where = window.prompt("Territory of the airfield (blank if you'd rather not say)?", "");
          if (where === null) return;
          if (where.trim()) action.territory = where.trim();
        }
        send(action);
      }, { disabled: !(canBuy && p.affordable), "class": "rk-btn rk-buy",
        "data-why": !canBuy ? "bought only at the start of a turn" :
          !p.affordable ? me.name + " has " + me.lost + " lost troops to spend" : null });
    })));
    if (view.turn.bought.length) box.appendChild(h("p", {}, "Bought this turn: " + view.turn.bought.join(", ")));
    return box;
  }

  function missionsPanel(view, send) {
    var box = h("section", { "class": "rk-panel" }, h("h2", {}, "Missions on the board"));
    var mine = view.turn.player;
    var canTake = !view.over && !view.attack && view.turn.mission === null && !view.turn.maneuver_done && !view.turn.card_drawn;
    box.appendChild(h("ul", { "class": "rk-missions" }, view.missions.map(function (m) {
      var status = m.status[mine];
      var mark = m.taken_by ? "taken by " + m.taken_by : (status === true ? "\u2714 met" : status === false ? "\u2716 not met" : "? check the board");
      return h("li", { "class": "rk-mission" + (m.taken_by ? " rk-taken" : "") }, [
        h("span", { "class": "rk-mission-title" }, m.title),
        h("span", { "class": "rk-mission-status" }, mark),
        !m.taken_by && canTake ? button("Take", function () { send({ type: "take_mission", mission: m.id }); }) : null
      ]);
    })));
    return box;
  }

  function countsEditor(view, send) {
    var sides = view.players.map(function (p) { return { name: p.name, data: p }; });
    sides.push({ name: "neutral", data: view.neutral });
    var box = h("details", { "class": "rk-panel rk-counts", open: countsOpen }, h("summary", {}, "Enter or correct counts, owners and airfields"));
    // Each saved entry redraws the page: the box stays open for the next one.
    // (the toggle event comes a task later: a redraw before it, from a choice made at once or a live update, would shut the box)
    box.firstChild.addEventListener("click", function () { countsOpen = !box.open; });
    box.addEventListener("toggle", function () { countsOpen = box.open; });
    sides.forEach(function (side) { box.appendChild(sideForm(view, side, send)); });
    box.appendChild(ownersEditor(view, send));
    return box;
  }

  /* One side's counts, regions, capitals (and lost troops, airfield) with its Save button. */
  function sideForm(view, side, send, extraClass) {
    var form = h("form", { "class": "rk-row" + (extraClass ? " " + extraClass : ""), "data-side": side.name,
      onsubmit: function (ev) { ev.preventDefault(); } });
    var d = side.data;
    form.appendChild(h("strong", { "class": "rk-side" }, side.name === "neutral" ? "Neutral" : side.name));
    form.appendChild(labelled("Territories", numberInput("territories", d.territories, 0, 30)));
    form.appendChild(labelled("Cities", numberInput("cities", d.cities, 0, 9)));
    form.appendChild(labelled("Troops", numberInput("troops", d.troops, 0)));
    if (side.name !== "neutral") {
      // Shows the typed number so a plain re-save keeps it; emptying the box clears it.
      form.appendChild(labelled("Region bonus typed (empty: from the regions ticked)", numberInput("region_bonus", d.region_bonus_typed, 0)));
      if (d.region_bonus_due) form.appendChild(h("p", { "class": "rk-due" }, "A region the typed bonus counted was lost: type the bonus again or tick the regions."));
      var regionBoxes = Object.keys(view.regions).map(function (r) {
        var on = d.regions && d.regions.indexOf(r) >= 0;
        return h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "region_" + r, checked: on }), " " + r +
          // the map data lacks some printed bonuses: say so, and where the table can give the number instead
          (view.regions[r].bonus === null ? " (bonus unknown: type the total above)" : " (+" + view.regions[r].bonus + ")")]);
      });
      form.appendChild(h("fieldset", { "class": "rk-regions" }, [h("legend", {}, "Whole regions held")].concat(regionBoxes)));
      var capitalBoxes = view.players.map(function (p) {
        return h("label", { "class": "rk-check" }, [h("input", { type: "checkbox", name: "capital_" + p.name, checked: d.capitals.indexOf(p.name) >= 0 }), " " + p.name + "'s capital"]);
      });
      form.appendChild(h("fieldset", { "class": "rk-regions" }, [h("legend", {}, "Capitals held")].concat(capitalBoxes)));
    }
    if (view.variant === "command_post") form.appendChild(labelled("Lost-troop table", numberInput("lost", d.lost, 0)));
    if (d.airfield) {
      // The tracker can destroy only an airfield whose territory it knows; the table removes the rest.
      form.appendChild(button("Remove " + side.name + "'s airfield" + (d.airfield.territory ? " in " + d.airfield.territory : " (no territory given)"),
        function () { send({ type: "remove_airfield", player: side.name }); }, { "class": "rk-btn rk-remove-airfield" }));
    }
    form.appendChild(button("Save " + (side.name === "neutral" ? "neutral" : side.name), function () {
      var action = { type: "set_counts", player: side.name };
      ["territories", "cities", "troops"].forEach(function (k) { action[k] = readNumber(form, k); });
      if (view.variant === "command_post") action.lost = readNumber(form, "lost") || 0;
      if (side.name !== "neutral") {
        // Sent only when changed: new ticks with an untouched number let the ticks count again.
        var bonus = readNumber(form, "region_bonus");
        if (bonus !== d.region_bonus_typed) action.region_bonus = bonus;
        action.regions = Object.keys(view.regions).filter(function (r) { return checked(form, "region_" + r); });
        action.capitals = view.players.map(function (p) { return p.name; }).filter(function (n) { return checked(form, "capital_" + n); });
      }
      send(action);
    }, { "class": "rk-btn rk-primary" }));
    return form;
  }

  function ownersEditor(view, send) {
    var form = h("form", { "class": "rk-row rk-owners", onsubmit: function (ev) { ev.preventDefault(); } });
    form.appendChild(h("strong", { "class": "rk-side" }, "Territory owners"));
    form.appendChild(h("datalist", { id: "rk-owner-territories" }, view.territory_names.map(function (t) { return h("option", { value: t }); })));
    var where = h("input", { name: "owner_territory", list: "rk-owner-territories", "class": "rk-text" });
    var who = h("select", { name: "owner", "class": "rk-select" }, view.players.map(function (p) {
      return h("option", { value: p.name }, p.name);
    }).concat([h("option", { value: "neutral" }, "Neutral army"), h("option", { value: "" }, "Not known")]));
    form.appendChild(labelled("Territory", where));
    form.appendChild(labelled("Held by", who));
    form.appendChild(button("Save owner", function () {
      send({ type: "set_owner", territory: where.value.trim(), owner: who.value || null });
    }, { "class": "rk-btn rk-primary" }));
    var known = Object.keys(view.owners || {});
    form.appendChild(h("p", { "class": "rk-owners-known" }, known.length ?
      "Known: " + known.map(function (t) { return t + " \u2014 " + view.owners[t]; }).join(", ") :
      "No owners known yet: the tracker checks what it is told."));
    return form;
  }

  function render(el, view, api) {
    var send = makeSend(api);
    var root = h("div", { "class": "rk-root" });
    var turn = view.turn;
    var header = h("header", { "class": "rk-header" }, [
      h("h1", {}, view.title + (view.variant === "command_post" ? " \u2014 Command Post" : " \u2014 Basic Training " + view.setup)),
      h("p", { "class": "rk-turn" }, "Round " + turn.round + (view.over ? "" : " \u00B7 " + turn.player + "'s turn \u00B7 " + turn.phase_label)),
      h("ol", { "class": "rk-phases" }, turn.phases.map(function (p) {
        return h("li", { "class": p === turn.phase ? "rk-phase-now" : "", "aria-current": p === turn.phase ? "step" : null }, p);
      })),
      h("p", { "class": "rk-message", role: "status" }, view.message)
    ]);
    root.appendChild(header);
    // (a star, not an emoji trophy: a Chromium without an emoji font draws that as an empty box)
    if (view.over) root.appendChild(h("p", { "class": "rk-winner" }, "\u2605 " + view.winner + " wins"));
    var main = h("div", { "class": "rk-columns" });
    if (view.variant === "command_post") main.appendChild(commandPost(view, api, send));
    main.appendChild(reinforcements(view, send, function () { render(el, view, api); }));
    if (!view.over) main.appendChild(view.attack ? battlePanel(view, api, send) : attackForm(view, send));
    if (view.last_battle && !view.attack) {
      var lb = view.last_battle;
      main.appendChild(h("section", { "class": "rk-panel" }, [h("h2", {}, "Last battle"),
        h("p", {}, lb.attacker + " against " + lb.defender + (lb.to ? " in " + lb.to : "") + ": " + lb.outcome +
          " (" + lb.start[0] + " v " + lb.start[1] + " \u2192 " + lb.end[0] + " v " + lb.end[1] + ")")]));
    }
    main.appendChild(missionsPanel(view, send));
    main.appendChild(cardsPanel(view, send));
    root.appendChild(main);
    if (!view.over) {
      root.appendChild(h("div", { "class": "rk-row rk-endbar" }, [
        // a button that can only fail is greyed, with the reason beside it
        button("Move troops (once)", function () { send({ type: "maneuver" }); }, { disabled: turn.maneuver_done,
          "data-why": turn.maneuver_done ? "the troops have moved once this turn" : null }),
        button("End turn", function () { send({ type: "end_turn" }); }, { "class": "rk-btn rk-primary rk-end", disabled: !!turn.card_due,
          "data-why": turn.card_due ? "first say which card " + turn.player + " drew (Cards)" : null })
      ]));
    }
    // the turn's own controls first; the standings (also in the side panel) after them
    root.appendChild(scoreboard(view));
    root.appendChild(countsEditor(view, send));
    if (window.COMPANION_MAP_FORM && view.map) root.appendChild(window.COMPANION_MAP_FORM(view, api, "rk"));
    el.replaceChildren(root);
    // a table that scrolls sideways takes the keyboard's focus (the shell marks them too, but this view redraws itself)
    el.querySelectorAll("table").forEach(function (t) {
      if (t.scrollWidth > t.clientWidth + 1) t.setAttribute("tabindex", "0"); else t.removeAttribute("tabindex");
    });
  }

  window.COMPANION_VIEWS = window.COMPANION_VIEWS || {};
  window.COMPANION_VIEWS.risk = function (el, view, api) {
    if (view !== seenView) {
      seenView = view;
    }
    render(el, view, api);
  };
})();
