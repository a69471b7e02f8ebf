/* Global Powers - the tracker page.
 * Renders the engine's view and sends actions through api.act. Global Powers uses
 * three-sided dice: the daemon rolls six-sided ones, halved and rounded up.
 * Plain browser JavaScript, no libraries; styles in view_global_powers.css (prefix "gp-"). */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var CHIPS = ["raw", "economy", "military", "diplomacy"];
  var CHIP_LABEL = { raw: "Raw", economy: "Econ", military: "Mil", diplomacy: "Dipl" };
  var CONVERSIONS = [
    ["mine", "1 raw \u2192 3 economy (roll)"],
    ["grow", "1 economy \u2192 2 economy"],
    ["diplomacy", "1 economy \u2192 2 diplomacy"],
    ["arm", "1 economy \u2192 1 military"]
  ];
  var APPLICATIONS = ["sanction", "disarmament", "ban", "end_sanction"];
  var selectedCard = "expansion";
  var selectedApplication = "sanction";
  // what the table is filling in for the state on screen: dropped when a new state arrives
  var seenView = null;
  var pageApi = null;
  var draft = {};          // the evaluation's choices (order on a tie, winner, sources, discards)
  var pendingWar = null;   // a war whose dice gave a coalition new politicians to share out
  var correcting = null;   // the party shown in the correction form, and whether the form is open
  var correctingOpen = false;

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
    [].concat(children || []).forEach(function (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }

  /* (app.js shows refusals and data-why) */
  function button(label, onclick, extra) {
    var attrs = { type: "button", "class": "gp-btn", onclick: onclick };
    Object.keys(extra || {}).forEach(function (k) { attrs[k] = extra[k]; });
    return h("button", attrs, label);
  }

  function field(label, control) { return h("label", { "class": "gp-field" }, [h("span", {}, label), control]); }
  function select(name, options, value) {
    return h("select", { name: name, "class": "gp-select" }, options.map(function (o) {
      var v = Array.isArray(o) ? o[0] : o, label = Array.isArray(o) ? o[1] : o;
      return h("option", { value: v, selected: v === value }, label);
    }));
  }
  function num(name, value, min, max, placeholder) {
    return h("input", { type: "number", name: name, value: value === undefined || value === null ? "" : value, min: min, max: max,
      placeholder: placeholder || "", inputmode: "numeric", "class": "gp-num" });
  }
  function draftNum(key, max) {
    var input = num(key, draft[key], 0, max);
    input.oninput = function () { draft[key] = input.value; };
    return input;
  }
  function intOf(input) { return input.value === "" ? null : parseInt(input.value, 10); }
  function pct(p) { return Math.round(100 * p) + "%"; }
  function names(view) { return view.players.map(function (p) { return p.name; }); }
  function d3(v) { return Math.ceil(v / 2); }

  /* Fill blank die inputs with the daemon's dice, then build the action. */
  function withDice(api, inputs, build) {
    var blanks = inputs.filter(function (i) { return i.value === ""; });
    var fill = blanks.length ? api.roll(blanks.length).then(function (values) {
      blanks.forEach(function (input, i) { input.value = String(d3(values[i])); });
    }) : Promise.resolve();
    return fill.then(build);
  }

  /* {name: number} from a list of number inputs, leaving out blanks and zeros. */
  function countsOf(inputs) {
    var out = {};
    Object.keys(inputs).forEach(function (k) { var v = intOf(inputs[k]); if (v) out[k] = v; });
    return out;
  }

  function vpChart(view) {
    var goal = view.vp_to_win;
    var most = view.players.reduce(function (m, p) { return Math.max(m, p.vp); }, goal);
    var rows = view.players.map(function (p) {
      return h("div", { "class": "bar-row" }, [
        h("span", { "class": "bar-name" }, p.name),
        h("span", { "class": "bar-track" }, [
          h("span", { "class": "bar-fill gp-c-" + p.colour, style: { width: (100 * Math.max(p.vp, 0) / most).toFixed(1) + "%" } }),
          h("span", { "class": "bar-num" }, String(p.vp)),
          h("span", { "class": "bar-goal", style: { left: (100 * goal / most).toFixed(1) + "%" } })])]);
    });
    return h("div", { "class": "bar-chart", role: "img",
      "aria-label": "Victory points if the evaluation were now, against " + goal + " needed: " +
        view.players.map(function (p) { return p.name + " " + p.vp; }).join(", ") },
      [h("p", { "class": "bar-caption" }, "dashed line: " + goal + " needed")].concat(rows));
  }

  function scoreboard(view) {
    var parties = view.players.map(function (p) {
      var active = view.turn && view.turn.player === p.name;
      return h("section", { "class": "gp-party" + (active ? " gp-active" : ""), "aria-current": active ? "true" : null }, [
        h("h3", {}, [h("span", { "class": "gp-swatch gp-c-" + p.colour }), p.name, " \u2014 " + p.vp + " VP", active ? " \u25C0 to play" : ""]),
        h("p", {}, "Home " + p.base + " \u00B7 regions " + p.in_regions + " \u00B7 UN " + p.un + " \u00B7 Mauritius " + p.mauritius +
          (p.removed ? " \u00B7 out " + p.removed : "")),
        h("p", {}, "Cards: hand " + p.hand + ", deck " + p.deck + ", played " + p.played + (p.warmonger ? " \u00B7 warmonger +1 ready" : "")),
        h("p", {}, "Governs " + p.governs.length + ": " + (p.governs.join(", ") || "nothing")),
        h("details", {}, [h("summary", {}, "VP breakdown"), h("table", { "class": "gp-table" }, [
          h("tbody", {}, p.breakdown.map(function (line) {
            return h("tr", {}, [h("th", { scope: "row" }, (line.region || line.source.toUpperCase()) + (line.sanctioned ? " (sanctioned, halved)" : "")),
              h("td", {}, line.why), h("td", { "class": "gp-vp" }, (line.vp > 0 ? "+" : "") + line.vp)]);
          })),
          h("tfoot", {}, h("tr", {}, [h("th", { scope: "row" }, "Total"), h("td", {}), h("td", { "class": "gp-vp" }, String(p.vp))]))
        ])])
      ]);
    });
    return h("section", { "class": "gp-panel" }, [h("h2", {}, "Victory points if the evaluation were now"), vpChart(view),
      h("div", { "class": "gp-parties" }, parties)]);
  }

  function regionsGrid(view, send) {
    var canActivate = view.phase === "play" && view.turn && !view.turn.started && !view.over;
    return h("section", { "class": "gp-panel" }, [
      h("h2", {}, "Regions (" + view.regions_done + " of 12 activated)"),
      h("div", { "class": "gp-regions" }, view.regions.map(function (r) {
        var people = Object.keys(r.politicians).map(function (p) {
          return h("li", { "class": r.government.indexOf(p) >= 0 ? "gp-gov" : "" }, (r.government.indexOf(p) >= 0 ? "\u2605 " : "") + p + " " + r.politicians[p]);
        });
        var marks = [];
        if (r.done) marks.push("DONE");
        if (r.sanctioned) marks.push("SANCTIONED");
        if (r.disarmed) marks.push("DISARMED");
        if (r.protectorate) marks.push("PROTECTORATE");
        var current = view.turn && view.turn.region === r.name;
        return h("article", { "class": "gp-region" + (r.done ? " gp-done" : "") + (current ? " gp-current" : "") }, [
          h("h3", {}, r.name),
          marks.length ? h("p", { "class": "gp-marks" }, marks.join(" \u00B7 ")) : null,
          people.length ? h("ul", { "class": "gp-people" }, people) : h("p", {}, "empty"),
          h("p", { "class": "gp-chips" }, CHIPS.map(function (c) { return CHIP_LABEL[c] + " " + r.chips[c]; }).join("  ")),
          people.length ? h("p", {}, "Strength " + r.strength) : null,
          canActivate && !r.done && people.length ? button("Activate", function () { send({ type: "activate", region: r.name }); }, { "class": "gp-btn gp-primary" }) : null
        ]);
      }))
    ]);
  }

  /* The war as the rules count it (companion/games/global_powers_rules.py war()): die + military + warmongers;
   * a draw on equal totals, or when an attacker 2 or more military ahead rolls a 1 against a 3. */
  function warOutcome(am, dm, ar, dr, ab, db) {
    var attack = ar + am + ab, defend = dr + dm + db;
    if (attack === defend || (am >= dm + 2 && ar === 1 && dr === 3)) return { winner: null, replaced: 0, attack: attack, defend: defend };
    return { winner: attack > defend ? "attacker" : "defender", replaced: Math.abs(attack - defend), attack: attack, defend: defend };
  }

  function regionOf(view, name) { return view.regions.filter(function (r) { return r.name === name; })[0]; }
  function playerOf(view, name) { return view.players.filter(function (p) { return p.name === name; })[0]; }

  /* After the dice: a coalition that won shares the new politicians (at most the difference, and no more than the
   * largest beaten party had there), each from its own home. Null when nobody has to choose. */
  function coalitionGains(view, action) {
    var here = regionOf(view, view.turn.region), there = regionOf(view, action.target);
    var bonus = { attacker: 0, defender: 0 };
    (action.warmonger || []).forEach(function (who) {
      if (here.government.indexOf(who) >= 0) bonus.attacker += 1; else if (there.government.indexOf(who) >= 0) bonus.defender += 1;
    });
    var out = warOutcome(here.chips.military, there.chips.military, action.attacker_roll, action.defender_roll, bonus.attacker, bonus.defender);
    if (!out.winner) return null;
    var won = out.winner === "attacker" ? here : there, lost = out.winner === "attacker" ? there : here;
    if (won.government.length < 2) return null;
    var most = lost.government.reduce(function (m, who) { return Math.max(m, lost.politicians[who] || 0); }, 0);
    var limit = Math.min(out.replaced, most);
    if (!limit) return null;
    return { action: action, outcome: out, won: won.name, lost: lost.name, parties: won.government.slice(), limit: limit };
  }

  function gainsForm(view, send, rerender) {
    var w = pendingWar, out = w.outcome;
    var box = h("div", { "class": "gp-gains" });
    box.appendChild(h("p", {}, "Dice " + w.action.attacker_roll + " and " + w.action.defender_roll + ": " + view.turn.region + " " + out.attack +
      " against " + w.action.target + " " + out.defend + ". " + w.won + " wins: its government (" + w.parties.join(" & ") +
      ") places up to " + w.limit + " new politician" + (w.limit > 1 ? "s" : "") + " in " + w.lost + ", each from its own home."));
    // as agreed before the dice; an even split to start with, as far as each has politicians at home
    var share = {}, left = w.limit, more = true;
    w.parties.forEach(function (p) { share[p] = 0; });
    while (left > 0 && more) {
      more = false;
      w.parties.forEach(function (p) { if (left > 0 && share[p] < playerOf(view, p).base) { share[p] += 1; left -= 1; more = true; } });
    }
    var inputs = {};
    w.parties.forEach(function (p) {
      if (draft["added_" + p] === undefined) draft["added_" + p] = share[p];
      inputs[p] = draftNum("added_" + p, Math.min(w.limit, playerOf(view, p).base));
    });
    box.appendChild(h("div", { "class": "gp-row" }, w.parties.map(function (p) {
      return field(p + " places (home " + playerOf(view, p).base + ")", inputs[p]);
    }).concat([
      button("Place them and record the war", function (ev) {
        var added = countsOf(inputs), total = 0;
        Object.keys(added).forEach(function (p) { total += added[p]; });
        if (total > w.limit) return warn(ev, "At most " + w.limit + " new politicians go to " + w.lost + ", not " + total + ".");
        var action = {};
        Object.keys(w.action).forEach(function (k) { action[k] = w.action[k]; });
        action.added = added;
        action.replace = total;
        return send(action).then(function () { if (pendingWar === w) pendingWar = null; });
      }, { "class": "gp-btn gp-primary" }),
      button("Not fought after all", function () { pendingWar = null; rerender(); })
    ])));
    return box;
  }

  /* A check of the page's own, refused before anything is sent: shown like the daemon's refusals, beside the button. */
  function warn(ev, text) {
    if (pageApi) pageApi.refuse(text);
  }

  function regionActions(view, api, send, rerender) {
    var t = view.turn;
    var here = t.region;
    var gov = t.government;
    var regionNames = view.regions.map(function (r) { return r.name; });
    var others = regionNames.filter(function (n) { return n !== here; });
    var box = h("section", { "class": "gp-panel" }, h("h2", {}, here + ": " + t.actions_left + " action(s) left (" + (gov.join(" & ") || "no government") + ")"));
    var partyPick = gov.length > 1 ? select("party", gov, gov[0]) : null;
    function withParty(action) { if (partyPick) action.party = partyPick.value; return action; }
    if (partyPick) box.appendChild(field("Acting governing party", partyPick));

    box.appendChild(h("h3", {}, "Budget"));
    box.appendChild(h("div", { "class": "gp-row" }, CONVERSIONS.map(function (c) {
      return button(c[1], function () {
        if (c[0] !== "mine") return send({ type: "budget", conversion: c[0] });
        return api.roll(1).then(function (v) { return send({ type: "budget", conversion: "mine", roll: d3(v[0]) }); }).catch(send.fail);
      });
    })));

    box.appendChild(h("h3", {}, "War"));
    if (pendingWar) box.appendChild(gainsForm(view, send, rerender));
    var target = select("target", view.war_odds.map(function (o) {
      return [o.target, o.target + " \u2014 win " + pct(o.attacker) + ", lose " + pct(o.defender) + ", draw " + pct(o.draw)];
    }));
    var aRoll = num("attacker_roll", "", 1, 3, "roll"), dRoll = num("defender_roll", "", 1, 3, "roll");
    var mongerBoxes = view.players.filter(function (p) { return p.warmonger > 0; }).map(function (p) {
      return h("input", { type: "checkbox", name: "wm_" + p.name, value: p.name });
    });
    var monger = mongerBoxes.map(function (box) {
      return h("label", { "class": "gp-check" }, [box, " " + box.getAttribute("value") + " uses warmonger"]);
    });
    if (!pendingWar) box.appendChild(h("div", { "class": "gp-row" }, [field("Target", target), field("Our die", aRoll), field("Their die", dRoll)].concat(monger, [
      button("\u2694 Wage war (blank dice: roll)", function () {
        withDice(api, [aRoll, dRoll], function () {
          var action = { type: "war", target: target.value, attacker_roll: intOf(aRoll), defender_roll: intOf(dRoll) };
          var used = mongerBoxes.filter(function (i) { return i.checked; }).map(function (i) { return i.getAttribute("value"); });
          if (used.length) action.warmonger = used;
          var gains = coalitionGains(view, action);
          if (gains) { pendingWar = gains; rerender(); return null; }
          return send(action);
        }).catch(send.fail);
      }, { "class": "gp-btn gp-primary" })])));

    box.appendChild(h("h3", {}, "Diplomacy"));
    box.appendChild(voteForm(view, send, here));

    box.appendChild(h("h3", {}, "Politicians"));
    var dest = select("to", regionNames, others[0]);
    var who = select("party", names(view), names(view)[0]);
    box.appendChild(h("div", { "class": "gp-row" }, [
      field("Region", dest),
      button("Migrate a governing politician there", function () { send(withParty({ type: "migration", to: dest.value })); }),
      button("Propaganda there", function () { send(withParty({ type: "propaganda", to: dest.value })); })
    ]));
    box.appendChild(h("div", { "class": "gp-row" }, [
      field("Party", who),
      button("Purge (1 military)", function () { send({ type: "purge", party: who.value }); }),
      button("Rehabilitate (1 diplomacy)", function () { send({ type: "rehabilitate", party: who.value }); })
    ]));

    box.appendChild(h("h3", {}, "Trade"));
    var partner = select("with", others, others[0]);
    var give = {}, get = {};
    CHIPS.forEach(function (c) { give[c] = num("give_" + c, "", 0, 5); get[c] = num("get_" + c, "", 0, 5); });
    box.appendChild(h("div", { "class": "gp-row" }, [field("With", partner)]
      .concat(CHIPS.map(function (c) { return field("Give " + CHIP_LABEL[c], give[c]); }))
      .concat(CHIPS.map(function (c) { return field("Get " + CHIP_LABEL[c], get[c]); }))
      .concat([button("Trade", function () { send({ type: "trade", "with": partner.value, give: countsOf(give), get: countsOf(get) }); })])));

    box.appendChild(h("div", { "class": "gp-row" }, [
      button("Ballot failed (action lost)", function () { send({ type: "failed_ballot" }); })
    ]));
    return box;
  }

  function voteForm(view, send, applicant, free) {
    var regionNames = view.regions.map(function (r) { return r.name; });
    var form = h("div", { "class": "gp-vote" });
    var app = select("application", APPLICATIONS.map(function (a) { return [a, a.replace("_", " ")]; }), selectedApplication);
    app.onchange = function () { selectedApplication = app.value; };
    var target = select("target", regionNames, applicant || regionNames[0]);
    var ban = select("ban", names(view), names(view)[0]);
    form.appendChild(h("div", { "class": "gp-row" }, [field("Application", app), field("Against region", target), field("Party to ban", ban)]));
    var forIn = {}, againstIn = {}, unFor = {}, unAgainst = {};
    view.regions.filter(function (r) { return r.chips.diplomacy > 0 && r.government.length; }).forEach(function (r) {
      forIn[r.name] = num("for_" + r.name, "", 0, r.chips.diplomacy);
      againstIn[r.name] = num("against_" + r.name, "", 0, r.chips.diplomacy);
    });
    view.players.filter(function (p) { return p.un > 0; }).forEach(function (p) {
      unFor[p.name] = num("unfor_" + p.name, "", 0, p.un);
      unAgainst[p.name] = num("unagainst_" + p.name, "", 0, p.un);
    });
    form.appendChild(h("table", { "class": "gp-table" }, [
      h("thead", {}, h("tr", {}, [h("th", { scope: "col" }, "Voter"), h("th", { scope: "col" }, "For"), h("th", { scope: "col" }, "Against")])),
      h("tbody", {}, Object.keys(forIn).map(function (n) {
        return h("tr", {}, [h("th", { scope: "row" }, n + " (chips)"), h("td", {}, forIn[n]), h("td", {}, againstIn[n])]);
      }).concat(Object.keys(unFor).map(function (n) {
        return h("tr", {}, [h("th", { scope: "row" }, n + " (UN votes)"), h("td", {}, unFor[n]), h("td", {}, unAgainst[n])]);
      })))
    ]));
    form.appendChild(button(free ? "Play card: application with 1 free vote" : "Put the application to the vote", function () {
      var action = free ? { type: "play_card", card: "diplomatic_initiative" } : { type: "diplomacy" };
      action.application = app.value;
      action.target = target.value;
      if (app.value === "ban") action.ban = ban.value;
      action["for"] = countsOf(forIn);
      action.against = countsOf(againstIn);
      action.un_for = countsOf(unFor);
      action.un_against = countsOf(unAgainst);
      send(action);
    }, { "class": "gp-btn gp-primary" }));
    return form;
  }

  function cardForm(view, api, send, rerender) {
    var regionNames = view.regions.map(function (r) { return r.name; });
    var me = view.turn.player;
    var box = h("section", { "class": "gp-panel" }, h("h2", {}, "Play a card (" + me + " holds " +
      view.players.filter(function (p) { return p.name === me; })[0].hand + ")"));
    var pick = select("card", view.cards.map(function (c) { return [c, c.replace(/_/g, " ")]; }), selectedCard);
    box.appendChild(field("Card", pick));
    pick.onchange = function () { selectedCard = pick.value; rerender(); };
    var card = selectedCard;
    if (card === "diplomatic_initiative") { box.appendChild(voteForm(view, send, null, true)); return box; }
    var row = h("div", { "class": "gp-row" });
    var inputs = {}, dice = [];
    function region(name, label) { inputs[name] = select(name, regionNames, regionNames[0]); row.appendChild(field(label, inputs[name])); }
    function party(name, label) { inputs[name] = select(name, names(view), names(view)[0]); row.appendChild(field(label, inputs[name])); }
    function die(name, label) { inputs[name] = num(name, "", 1, 3, "roll"); dice.push(inputs[name]); row.appendChild(field(label, inputs[name])); }
    function count(name, label, max) { inputs[name] = num(name, "", 0, max); row.appendChild(field(label, inputs[name])); }
    function list(name, label) { inputs[name] = h("input", { name: name, "class": "gp-text", placeholder: "Region, Region" }); row.appendChild(field(label, inputs[name])); }
    if (card === "attentat") { party("target_party", "Victim's party"); region("region", "Region"); die("roll", "Die"); }
    if (card === "development_aid") { region("from", "From (richer)"); region("to", "To"); }
    if (card === "expansion") { region("region", "Region"); count("n", "Politicians (1-2)", 2); }
    if (card === "warmonger") {
      inputs.use = select("use", [["keep", "keep for +1 in a war"], ["cancel_peace", "cancel the peace initiative"], ["cancel_pact", "cancel a pact"]], "keep");
      row.appendChild(field("Use", inputs.use));
      list("pact", "Pact regions (to cancel)");
    }
    if (card === "non_aggression_pact") { region("region", "Region"); region("neighbour", "Neighbour"); }
    if (card === "putsch") {
      // a putsch stakes at least one politician from home: the field starts at one, never at none
      region("region", "Region"); count("committed", "My base politicians committed");
      inputs.committed.value = "1"; inputs.committed.min = "1"; die("player_roll", "My die");
      die("government_roll", "Government's die");
      view.players.forEach(function (p) { if (p.name !== me) count("gc_" + p.name, p.name + " commits"); });
    }
    if (card === "recession" || card === "revolution") { region("region", "Region"); list("neighbours", "Its neighbours"); }
    box.appendChild(row);
    function regionsOf(text) { return text.split(",").map(function (x) { return x.trim(); }).filter(Boolean); }
    box.appendChild(button("Play " + card.replace(/_/g, " "), function () {
      var extra = card === "revolution" ? 1 + regionsOf(inputs.neighbours.value).length : 0;
      var revolutionDice = extra ? api.roll(extra) : Promise.resolve([]);
      revolutionDice.then(function (rolled) {
        return withDice(api, dice, function () {
          var action = { type: "play_card", card: card };
          Object.keys(inputs).forEach(function (k) {
            if (k.indexOf("gc_") === 0 || k === "n" || k === "pact" || k === "neighbours") return;
            var input = inputs[k];
            action[k] = input.getAttribute("type") === "number" ? intOf(input) : input.value;
          });
          if (card === "expansion") { action.to = {}; action.to[inputs.region.value] = intOf(inputs.n) || 2; delete action.region; }
          if (card === "warmonger" && inputs.use.value === "cancel_pact") action.pact = regionsOf(inputs.pact.value);
          if (card === "putsch") {
            action.committed = intOf(inputs.committed) || 0;
            action.government_committed = {};
            Object.keys(inputs).filter(function (k) { return k.indexOf("gc_") === 0; }).forEach(function (k) {
              var v = intOf(inputs[k]); if (v) action.government_committed[k.slice(3)] = v;
            });
          }
          if (card === "recession" || card === "revolution") action.neighbours = regionsOf(inputs.neighbours.value);
          if (card === "revolution") {
            action.rolls = {};
            [action.region].concat(action.neighbours).forEach(function (r, i) { action.rolls[r] = d3(rolled[i]); });
          }
          return send(action);
        });
      }).catch(send.fail);
    }, { "class": "gp-btn gp-primary" }));
    return box;
  }

  /* A die for each tied party, rolled again until one is highest: {party: die}. */
  function tieRolls(api, tied) {
    function once(left) {
      return api.roll(tied.length).then(function (values) {
        var rolls = {};
        tied.forEach(function (p, i) { rolls[p] = values[i]; });
        var best = Math.max.apply(null, values);
        var top = values.filter(function (v) { return v === best; }).length;
        return top === 1 || left <= 0 ? rolls : once(left - 1);
      });
    }
    return once(20);
  }

  function setupPanel(view, api, send) {
    var box = h("section", { "class": "gp-panel" }, h("h2", {}, "Set-up"));
    if (view.next_auction) {
      var offers = {};
      view.players.forEach(function (p) { offers[p.name] = num("offer_" + p.name, "", 0, Math.max(0, p.base - 1)); });
      box.appendChild(h("h3", {}, "Auction: " + view.next_auction));
      box.appendChild(h("div", { "class": "gp-row" }, view.players.map(function (p) { return field(p.name + " offers", offers[p.name]); }).concat([
        button("Reveal offers", function () { send({ type: "auction", region: view.next_auction, offers: countsOf(offers) }); }, { "class": "gp-btn gp-primary" })
      ])));
    }
    if (view.last_auction) {
      var la = view.last_auction;
      box.appendChild(h("p", {}, la.region + ": placed " + (Object.keys(la.placed).map(function (p) { return p + " " + la.placed[p]; }).join(", ") || "nobody") +
        (la.to_mauritius ? "; " + la.to_mauritius + " sends one to Mauritius" : "")));
    }
    // the weakest party starts; when several are tied (all of them, if the auction was skipped) the dice decide
    var tied = view.weakest || [];
    var first = select("first", [["", tied.length > 1 ? "weakest party (tied: the dice decide)" : "weakest party"]].concat(names(view)), "");
    box.appendChild(h("div", { "class": "gp-row" }, [field("First player", first),
      button("Start the game", function () {
        var a = { type: "start" };
        if (first.value) { a.first = first.value; return send(a); }
        if (tied.length < 2) return send(a);
        return tieRolls(api, tied).then(function (rolls) { a.tie_rolls = rolls; return send(a); }).catch(send.fail);
      }, { "class": "gp-btn gp-primary" })]));
    return box;
  }

  function regionEditor(view, send) {
    var box = h("details", { "class": "gp-panel" }, h("summary", {}, "Enter or correct a region"));
    var regionNames = view.regions.map(function (r) { return r.name; });
    var pick = select("region", regionNames, regionNames[0]);
    var pols = {}, chips = {};
    view.players.forEach(function (p) { pols[p.name] = num("pol_" + p.name, "", 0, 20); });
    CHIPS.forEach(function (c) { chips[c] = num("chip_" + c, "", 0, 5); });
    box.appendChild(h("div", { "class": "gp-row" }, [field("Region", pick)]
      .concat(view.players.map(function (p) { return field(p.name, pols[p.name]); }))
      .concat(CHIPS.map(function (c) { return field(CHIP_LABEL[c] + " chips", chips[c]); }))
      .concat([button("Save region", function () {
        var action = { type: "set_region", region: pick.value };
        var politicians = {}, any = false;
        Object.keys(pols).forEach(function (p) { var v = intOf(pols[p]); if (v !== null) { any = true; if (v) politicians[p] = v; } });
        if (any) action.politicians = politicians;
        CHIPS.forEach(function (c) { var v = intOf(chips[c]); if (v !== null) action[c] = v; });
        send(action);
      }, { "class": "gp-btn gp-primary" })])));
    box.appendChild(h("p", {}, "Blank fields stay as they are."));
    return box;
  }

  /* The evaluation asks only what it will need (the daemon's view.evaluation says what): the winner on a tie for the
   * win, the order of parties level on VP, and where the UN envoys and the politicians taken out of the game come
   * from when a party has too few at home (or wants to take them from its regions). */
  /* A correction of one party's counts (set_party): what is in the UN, in Mauritius, out of the game, and its cards.
   * Home is worked out from the rest. */
  var PARTY_FIELDS = [["un", "In the UN"], ["mauritius", "In Mauritius"], ["removed", "Out of the game"],
    ["hand", "Cards in hand"], ["deck", "Cards in the deck"], ["played", "Cards played"], ["warmonger", "Warmonger kept"]];
  function partyEditor(view, send, rerender) {
    var who = names(view).indexOf(correcting) >= 0 ? correcting : names(view)[0];
    var p = playerOf(view, who);
    var box = h("details", { "class": "gp-panel", open: correctingOpen }, h("summary", {}, "Correct a party (politicians and cards)"));
    // (the toggle event comes a task later: a redraw before it, from a choice made at once or a live update, would shut the box)
    box.firstChild.addEventListener("click", function () { correctingOpen = !box.open; });
    box.addEventListener("toggle", function () { correctingOpen = box.open; });
    var pick = select("party", names(view), who);
    pick.onchange = function () { correcting = pick.value; rerender(); };
    var inputs = {};
    PARTY_FIELDS.forEach(function (f) {
      var key = "party_" + f[0];
      if (draft[key] === undefined || draft.party_of !== who) draft[key] = p[f[0]];
      inputs[f[0]] = draftNum(key, f[0] === "hand" ? 5 : f[0] === "un" || f[0] === "mauritius" || f[0] === "removed" ? 20 : 16);
    });
    draft.party_of = who;
    box.appendChild(h("div", { "class": "gp-row" }, [field("Party", pick)].concat(PARTY_FIELDS.map(function (f) { return field(f[1], inputs[f[0]]); }))
      .concat([button("Save " + who, function (ev) {
        var action = { type: "set_party", party: who };
        for (var i = 0; i < PARTY_FIELDS.length; i++) {
          var key = PARTY_FIELDS[i][0], v = intOf(inputs[key]);
          if (v === null || isNaN(v) || v < 0) return warn(ev, PARTY_FIELDS[i][1] + ": give a number of 0 or more.");
          action[key] = v;
        }
        return send(action);
      }, { "class": "gp-btn gp-primary" })])));
    box.appendChild(h("p", {}, who + " has " + p.base + " at home and " + p.in_regions + " in the regions (home follows from the rest: 20 in all). " +
      "Hand, deck, played cards and a kept warmonger make 16."));
    return box;
  }

  function evaluationPanel(view, send, rerender) {
    var e = view.evaluation;
    var box = h("section", { "class": "gp-panel gp-evaluation" }, h("h2", {}, "Evaluation"));
    var n = view.players.length;
    var action = { type: "evaluate" };
    var checks = [];
    if (!draft.order) draft.order = e.order.slice();
    var order = draft.order;
    var top = Math.max.apply(null, order.map(function (p) { return e.vp[p]; }));
    var winnerPick = null;
    function pickWinner(text) {
      box.appendChild(h("p", {}, text));
      winnerPick = select("winner", e.tie_for_win, draft.winner || e.tie_for_win[0]);
      winnerPick.onchange = function () { draft.winner = winnerPick.value; };
      box.appendChild(h("div", { "class": "gp-row" }, field("Winner after the roll", winnerPick)));
    }
    if (e.ends === "vp") {
      var leaders = order.filter(function (p) { return e.vp[p] === top; });
      if (e.tie_for_win.length) pickWinner(leaders.join(" and ") + " are level on " + top + " VP (" + e.needed + " needed): roll for the win.");
      else box.appendChild(h("p", {}, leaders[0] + " has " + top + " VP (" + e.needed + " needed): the evaluation ends the game."));
    } else {
      e.tied.forEach(function (group) {
        var at = order.map(function (p, i) { return group.indexOf(p) >= 0 ? i : -1; }).filter(function (i) { return i >= 0; });
        var row = h("div", { "class": "gp-row", role: "group", "aria-label": "Order of the parties level on " + e.vp[group[0]] + " VP" });
        at.forEach(function (pos, k) {
          var pick = select("un_order_" + pos, group, order[pos]);
          pick.onchange = function () {
            var was = order.indexOf(pick.value);
            order[was] = order[pos];
            order[pos] = pick.value;
            rerender();
          };
          row.appendChild(field((k === 0 ? "Lower" : k === at.length - 1 ? "Higher" : "Then") + " on " + e.vp[group[0]] + " VP", pick));
        });
        box.appendChild(h("p", {}, group.join(", ") + " are level on " + e.vp[group[0]] + " VP: roll for their places (the lower sends fewer to the UN)."));
        box.appendChild(row);
      });
      if (e.tied.length) action.un_order = order.slice();
      var rows = [];
      order.forEach(function (p, i) {
        var avail = e.available[p], home = e.home[p];
        var un = Math.min(i + 1, avail), out = Math.min(n - i - 1, avail - un);
        var held = e.regions[p];
        var short = un + out > home;
        rows.push(h("p", { "class": "gp-un-line" }, [h("strong", {}, p), " (" + e.vp[p] + " VP) " + (un ? "sends " + un + " to the UN" +
          (out ? " and takes " + out + " out of the game" : "") + "; " + home + " at home" + (short ? ": the rest from the regions" : "") :
          "has nobody left at home or in a region")]));
        var places = Object.keys(held);
        if (!places.length || !(un + out)) return;
        var inputs = places.map(function (r) {
          return { region: r, un: draftNum("u|" + p + "|" + r, Math.min(held[r], un)), out: out ? draftNum("x|" + p + "|" + r, Math.min(held[r], out)) : null };
        });
        var more = h("details", { "class": "gp-sources", open: short || inputs.some(function (x) { return draft[x.un.name] || (x.out && draft[x.out.name]); }) },
          [h("summary", {}, short ? p + ": say which regions they come from" : p + ": take some from the regions instead of home")]);
        inputs.forEach(function (x) {
          more.appendChild(h("div", { "class": "gp-row" }, [h("span", { "class": "gp-src-name" }, x.region + " (" + held[x.region] + ")"),
            field("to the UN", x.un), x.out ? field("out of the game", x.out) : null]));
        });
        rows.push(more);
        checks.push(function () {
          var fromUn = {}, fromOut = {}, sumUn = 0, sumOut = 0;
          inputs.forEach(function (x) {
            var u = intOf(x.un) || 0, o = x.out ? intOf(x.out) || 0 : 0;
            if (u + o > held[x.region]) throw new Error(p + " has only " + held[x.region] + " in " + x.region + ".");
            if (u) { fromUn[x.region] = u; sumUn += u; }
            if (o) { fromOut[x.region] = o; sumOut += o; }
          });
          if (sumUn > un) throw new Error(p + " sends only " + un + " to the UN, not " + sumUn + ".");
          if (sumOut > out) throw new Error(p + " takes only " + out + " out of the game, not " + sumOut + ".");
          var homeUn = un - sumUn, homeOut = out - sumOut;
          if (homeUn > home) throw new Error(p + " has " + home + " at home: take " + (homeUn - home) + " more for the UN from the regions.");
          if (homeOut > home - homeUn) throw new Error(p + " has " + (home - homeUn) + " left at home: take " + (homeOut - home + homeUn) + " more out of the game from the regions.");
          if (sumUn) { fromUn.base = homeUn; (action.un_from = action.un_from || {})[p] = fromUn; }
          if (sumOut) { fromOut.base = homeOut; (action.remove_from = action.remove_from || {})[p] = fromOut; }
        });
      });
      box.appendChild(h("h3", {}, "The UN step, lowest VP first"));
      rows.forEach(function (r) { box.appendChild(r); });
      if (e.ends === "no_politicians") {
        var afterwards = "After it nobody has a politician at home or in a region: the game ends on the VP";
        if (e.tie_for_win.length) pickWinner(afterwards + ", and " + e.tie_for_win.join(" and ") + " are level on " + top + ": roll for the win.");
        else box.appendChild(h("p", {}, afterwards + "."));
      }
      var discards = {};
      view.players.forEach(function (p) { if (p.hand) discards[p.name] = draftNum("discard_" + p.name, p.hand); });
      if (Object.keys(discards).length) {
        box.appendChild(h("h3", {}, "Cards thrown away before drawing back to 5 (if any)"));
        box.appendChild(h("div", { "class": "gp-row" }, Object.keys(discards).map(function (p) { return field(p, discards[p]); })));
      }
      checks.push(function () { var d = countsOf(discards); if (Object.keys(d).length) action.discard = d; });
    }
    box.appendChild(h("div", { "class": "gp-row" }, button("Run the evaluation", function (ev) {
      delete action.un_from; delete action.remove_from; delete action.discard;
      try { checks.forEach(function (c) { c(); }); } catch (err) { return warn(ev, err.message); }
      if (winnerPick) action.winner = winnerPick.value;
      return send(action);
    }, { "class": "gp-btn gp-primary" })));
    return box;
  }

  function lastEvaluation(view) {
    var e = view.last_evaluation;
    if (!e) return null;
    return h("section", { "class": "gp-panel" }, [
      h("h2", {}, "Evaluation " + e.number + (e.winner ? " \u2014 " + e.winner + " wins" : "")),
      h("table", { "class": "gp-table" }, [
        h("thead", {}, h("tr", {}, ["Party", "VP", "Sent to UN", "Removed"].map(function (t) { return h("th", { scope: "col" }, t); }))),
        h("tbody", {}, Object.keys(e.vp).map(function (p) {
          return h("tr", {}, [h("th", { scope: "row" }, p), h("td", {}, String(e.vp[p])), h("td", {}, String(e.un_sent[p] || 0)), h("td", {}, String(e.removed[p] || 0))]);
        }))
      ])
    ]);
  }

  // the game goes in rounds of the regions, each closed by an evaluation once every region has acted
  function roundNow(view) {
    if (!view.turn) return "Set-up";
    var round = "Round " + view.turn.round;
    if (view.over) return round;
    if (view.phase === "evaluation") return round + " \u00B7 evaluation " + view.turn.round;
    var left = view.regions_pending.length;
    return round + " \u00B7 " + view.turn.player + "'s turn \u00B7 " +
      (left ? left + (left === 1 ? " region" : " regions") + " still to act" : "the evaluation comes after this turn");
  }

  function render(el, view, api) {
    var rerender = function () { render(el, view, api); };
    pageApi = api;
    var send = function (action) { return api.act(action).catch(api.refused); };
    send.fail = api.refused;
    var root = h("div", { "class": "gp-root" });
    var header = h("header", { "class": "gp-header" }, [
      h("h1", {}, view.title),
      h("p", { "class": "gp-turn" }, roundNow(view) + " \u00B7 dominance at " + view.dominance + " regions \u00B7 " +
        view.vp_to_win + " VP to win" + (view.peace ? " \u00B7 PEACE" : "")),
      h("p", { "class": "gp-message", role: "status" }, view.message)
    ]);
    root.appendChild(header);
    // (a star, not an emoji trophy: a Chromium without an emoji font draws that as an empty box)
    if (view.over) root.appendChild(h("p", { "class": "gp-winner" }, "\u2605 " + view.winner + " wins"));
    if (view.phase === "setup") root.appendChild(setupPanel(view, api, send));
    if (view.phase === "evaluation" && view.evaluation) root.appendChild(evaluationPanel(view, send, rerender));
    if (view.phase === "play" && view.turn) {
      var t = view.turn;
      if (view.un_intervention_open) {
        var target = select("region", view.regions.filter(function (r) { return Object.keys(r.politicians).length; }).map(function (r) { return r.name; }));
        root.appendChild(h("section", { "class": "gp-panel" }, [h("h2", {}, "UN troops (if the UN votes for them)"), h("div", { "class": "gp-row" }, [field("Region", target),
          button("Send 3 UN troops (dice rolled)", function () {
            api.roll(2).then(function (v) { return send({ type: "un_intervention", region: target.value, un_roll: d3(v[0]), region_roll: d3(v[1]) }); }).catch(send.fail);
          })])]));
      }
      if (t.region && !view.over) root.appendChild(regionActions(view, api, send, rerender));
      if (!t.started && !view.over) root.appendChild(cardForm(view, api, send, rerender));
      if (!view.over) {
        var rp = select("party", names(view), t.player), rr = select("region", view.regions.map(function (r) { return r.name; }), t.region || view.regions[0].name);
        var rn = num("n", 1, 1, 20);
        root.appendChild(h("section", { "class": "gp-panel" }, [h("h2", {}, "Recall politicians home (turn start, veto or forcing)"),
          h("div", { "class": "gp-row" }, [field("Party", rp), field("From", rr), field("How many", rn),
            button("Recall", function () { send({ type: "recall", party: rp.value, region: rr.value, n: intOf(rn) || 1 }); })])]));
        root.appendChild(h("div", { "class": "gp-row gp-endbar" }, button("End turn", function () { send({ type: "end_turn" }); }, { "class": "gp-btn gp-primary gp-end" })));
      }
    }
    // the turn's own controls first; the standings (also in the side panel) after them
    root.appendChild(scoreboard(view));
    if (view.last_war) {
      var w = view.last_war;
      root.appendChild(h("p", { "class": "gp-panel" }, "Last war: " + w.attacker + " " + w.attack + " against " + w.defender + " " + w.defend + " \u2014 " +
        (w.winner === null ? "draw" : (w.winner === "attacker" ? w.attacker : w.defender) + " wins")));
    }
    if (view.last_vote) {
      var v = view.last_vote;
      root.appendChild(h("p", { "class": "gp-panel" }, "Last vote: " + v.application.replace("_", " ") + " against " + v.target + ", " +
        v["for"] + " for to " + v.against + " against \u2014 " + (v.passed ? "passed" : "failed")));
    }
    var le = lastEvaluation(view);
    if (le) root.appendChild(le);
    root.appendChild(regionsGrid(view, send));
    if (!view.over) root.appendChild(regionEditor(view, send));
    if (!view.over) root.appendChild(partyEditor(view, send, rerender));
    el.replaceChildren(root);
    // as the shell does after its own drawing: a table that scrolls sideways takes the keyboard's focus (this view redraws itself too)
    el.querySelectorAll("table").forEach(function (t) {
      if (t.scrollWidth > t.clientWidth + 1) t.setAttribute("tabindex", "0"); else t.removeAttribute("tabindex");
    });
  }

  window.COMPANION_VIEWS = window.COMPANION_VIEWS || {};
  window.COMPANION_VIEWS.global_powers = function (el, view, api) {
    if (view !== seenView) {
      // a new state (from this tablet, another one or the buttons): what was being filled in for the old one goes
      // (an error too: "Japan has no raw chip" belongs to the turn it was tapped in, not the next player's)
      seenView = view;
      draft = {};
      pendingWar = null;
    }
    render(el, view, api);
  };
})();
