/* Game nights: the History button and New game's earlier names; the code behind both (history.js) loads on first use. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  let loading = null;
  function load() {
    if (!loading) {
      loading = new Promise((resolve, reject) => {
        const css = Object.assign(document.createElement("link"), { rel: "stylesheet", href: "/static/history.css" });
        const js = Object.assign(document.createElement("script"), { src: "/static/history.js" });
        js.onload = () => resolve(window.CompanionHistory);
        js.onerror = () => { loading = null; js.remove(); reject(new Error("The history could not be loaded: is the companion reachable?")); };
        document.head.append(css);
        document.body.append(js);
      });
    }
    return loading;
  }
  $("btn-history").addEventListener("click", () => load().then((h) => h.toggle()).catch((e) => {
    const b = $("banner");
    b.textContent = e.message;
    b.hidden = false;
  }));
  // a name field of New game: the names of earlier plays under it, most recent first
  for (const kind of ["focusin", "input"]) {
    $("setup-seats").addEventListener(kind, (ev) => {
      if (ev.target.classList.contains("seat-name")) load().then((h) => h.suggest(ev.target, kind === "input")).catch(() => {});
    });
  }
})();
