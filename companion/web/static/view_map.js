/* The Map form: the players enter once what the printed board shows and the shipped map lacks.
 * Used by the Risk and Balance of Power views (their own class prefix keeps it in their style);
 * posts to /api/map/<game>, which saves the entries beside the config. */
(function () {
  "use strict";

  var lastMessage = {};

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k.slice(0, 2) === "on") node[k] = v;  // a handler as a property: as an attribute it is inline script (CSP)
      else if (k === "style") Object.keys(v).forEach(function (prop) { node.style.setProperty(prop, String(v[prop])); });  // CSSOM, one property each: no style attribute (CSP), and a value is never read as more declarations
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : v);
    });
    [].concat(children === undefined ? [] : children).forEach(function (c) {
      if (c !== null && c !== undefined && c !== false) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  window.COMPANION_MAP_FORM = function (view, api, p) {
    var map = view.map || {};
    var game = map.game;
    var names = view.territory_names || view.known_territories || [];
    var groups = view.regions || view.empires || {};
    var listId = p + "-map-names";
    var box = h("details", { "class": p + "-panel " + p + "-map", open: lastMessage[game] ? true : null },
      h("summary", {}, "Map: add what your printed board shows"));
    box.appendChild(h("datalist", { id: listId }, names.map(function (t) { return h("option", { value: t }); })));
    function text(name, ph) { return h("input", { name: name, list: listId, "class": p + "-text", placeholder: ph || "" }); }
    function field(label, control) { return h("label", { "class": p + "-field" }, [h("span", {}, label), control]); }
    var hint = "Saved once for every game on this table; only additions, checked against the rulebook's facts.";
    var status = h("p", { role: "status" }, lastMessage[game] || hint);
    function say(message) {
      lastMessage[game] = message;
      // the answer's new state has redrawn the view by now: write into the form on the page
      var live = document.querySelector("." + p + "-map [role=status]") || status;
      live.textContent = message;
    }
    function add(entry) {
      lastMessage[game] = "Saving\u2026";
      return post(entry).then(function () { say("\u2713 Saved."); }, function (err) {
        say("Nothing was saved: the reason is beside the button.");
        if (api.refused) api.refused(err);
      });
    }
    function post(entry) {
      if (!api.map) return Promise.reject(new Error("this page cannot save map entries"));
      return api.map(game, entry);
    }
    function row(controls, label, make) {
      var form = h("form", { "class": p + "-row", onsubmit: function (ev) { ev.preventDefault(); } }, controls);
      form.appendChild(h("button", { type: "button", "class": p + "-btn", onclick: function () {
        var entry = make(form);
        if (entry) add(entry);
      } }, label));
      return form;
    }
    function val(form, name) { var f = form.querySelector('[name="' + name + '"]'); return f ? f.value.trim() : ""; }

    box.appendChild(row([field("Border", text("a")), field("and", text("b"))], "Add border", function (f) {
      return val(f, "a") && val(f, "b") ? { borders: [[val(f, "a"), val(f, "b")]] } : null;
    }));
    box.appendChild(row([field("Every border of", text("t"))], "Is now listed", function (f) {
      return val(f, "t") ? { borders_complete: [val(f, "t")] } : null;
    }));
    if (game === "risk") {
      box.appendChild(row([field("Rough terrain (" + (map.rough || []).length + " of " + map.rough_count + " known)", text("t"))], "Add rough", function (f) {
        return val(f, "t") ? { rough: [val(f, "t")] } : null;
      }));
    }
    if (game === "balance_of_power") {
      box.appendChild(row([field("Printed territory the map lacks", h("input", { name: "t", "class": p + "-text" }))], "Add territory", function (f) {
        return val(f, "t") ? { territories: [val(f, "t")] } : null;
      }));
    }
    var group = game === "risk" ? "regions" : "empires";
    var select = h("select", { name: "g", "class": p + "-select" }, Object.keys(groups).map(function (g) {
      return h("option", { value: g }, groups[g].title || g);
    }));
    var extras = game === "risk" ? [field("Bonus", h("input", { name: "bonus", type: "number", min: 1, max: 10, "class": p + "-num" }))]
      : [field("Capital", text("capital"))];
    box.appendChild(row([field(game === "risk" ? "Region" : "Empire", select), field("Territory", text("t"))].concat(extras), "Add to " + group.slice(0, -1), function (f) {
      var spec = {};
      if (val(f, "t")) spec.territories = [val(f, "t")];
      if (val(f, "bonus")) spec.bonus = parseInt(val(f, "bonus"), 10);
      if (val(f, "capital")) spec.capital = val(f, "capital");
      if (!Object.keys(spec).length) return null;
      var entry = {};
      entry[group] = {};
      entry[group][select.value] = spec;
      return entry;
    }));
    box.appendChild(status);
    return box;
  };
})();
