function (cfg) {
  // The live explorer's page side (see live.script in run.go). Every message carries the whole
  // control state with its sequence number: "kind,seq,clients,rule,mean x5,var x5,weight x5".
  var root = document.getElementById(cfg.root);
  if (!root || root.dataset.started) { return; }
  root.dataset.started = "1";
  root.querySelectorAll(".fedbayes-explorer-offline").forEach(function (e) { e.style.display = "none"; });
  var seq = 0, ended = false;
  function el(what, k) { return document.getElementById(cfg.panel + "-" + what + "-" + k); }
  function alive() { return !ended && document.getElementById(cfg.root) === root; }
  function state() {
    var v = [el("clients", 0).value, el("rule", 0).value];
    ["mean", "var", "weight"].forEach(function (w) {
      for (var k = 0; k < cfg.slots; k++) { v.push(el(w, k).value); }
    });
    return v.join(",");
  }
  function send(kind) {
    var c = globalThis.gonb_comm;
    if (!c) { return false; }
    c.send(cfg.addr, kind + "," + seq + "," + root.dataset.state);
    return true;
  }
  function show() {
    ["mean", "var", "weight"].forEach(function (w) {
      for (var k = 0; k < cfg.slots; k++) {
        var s = el(w, k);
        document.getElementById(s.id + "-value").textContent = cfg.labels[w][parseInt(s.value, 10) - cfg.mins[w]];
      }
    });
    var K = parseInt(el("clients", 0).value, 10) + 2;
    for (var k = 0; k < cfg.slots; k++) { el("row", k).style.opacity = k < K ? "1" : "0.35"; }
  }
  function changed() {
    if (!alive()) { return; }
    seq++;
    root.dataset.seq = String(seq);
    root.dataset.state = state();
    show();
    send("c");
  }
  root.querySelectorAll("input, select").forEach(function (e) {
    e.addEventListener("input", changed);
    e.addEventListener("change", changed);
  });
  el("stop", 0).addEventListener("click", function () { if (alive()) { send("s"); } });
  // The first message says the page is live; it waits for GoNB's connection to the kernel.
  var hello = setInterval(function () {
    if (!alive()) { clearInterval(hello); return; }
    var c = globalThis.gonb_comm;
    if (c && c.websocket_is_opened) { clearInterval(hello); send("b"); }
  }, 100);
  var beat = setInterval(function () {
    if (!alive()) { clearInterval(beat); return; }
    send(document.visibilityState === "hidden" ? "h" : "b");
  }, cfg.every);
  document.addEventListener("visibilitychange", function () {
    if (alive()) { send(document.visibilityState === "hidden" ? "h" : "b"); }
  });
  function bye() { if (alive()) { send("x"); ended = true; } }
  window.addEventListener("pagehide", bye);
  window.addEventListener("beforeunload", bye);
}
