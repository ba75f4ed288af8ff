// The script of the mcs web console. Everything it shows from the server is
// inserted as text (textContent), never as markup.
"use strict";
(function () {
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var page = document.body.dataset.page;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return { error: "the console answered " + r.status }; });
    }, function (e) { return { error: "the console cannot be reached: " + e.message }; });
  }
  function showOutcome(box, o) {
    box.hidden = false;
    box.className = "outcome kind-" + (o.kind || "error");
    box.querySelector("h3").textContent = o.title || o.error || "";
    box.querySelector("pre").textContent = o.text || o.error || "";
  }
  function when(t) { return t ? new Date(t).toLocaleString() : "-"; }

  // Live updates: one event stream; the browser reconnects on its own, and the
  // server replays the audit records after the last one seen.
  var handlers = {};
  function on(name, f) { (handlers[name] = handlers[name] || []).push(f); }
  function connect() {
    var live = document.getElementById("live");
    var es = new EventSource(page === "audit" ? "/events" : "/events?backlog=0");
    es.onopen = function () {
      live.className = "live up"; live.title = "live";
      (handlers.open || []).forEach(function (f) { f(); });
    };
    es.onerror = function () { live.className = "live down"; live.title = "reconnecting"; };
    ["audit", "approvals", "auth"].forEach(function (name) {
      es.addEventListener(name, function (ev) {
        var data = {};
        try { data = JSON.parse(ev.data); } catch (e) { }
        (handlers[name] || []).forEach(function (f) { f(data); });
      });
    });
  }

  // Consent questions wait in a banner on every page.
  function renderConsent(list) {
    var box = document.getElementById("consent");
    box.textContent = "";
    box.hidden = list.length === 0;
    list.forEach(function (q) {
      var d = el("div", "question");
      d.dataset.id = q.id;
      d.appendChild(el("strong", null, "Run " + q.tool + "?"));
      d.appendChild(el("pre", "args", JSON.stringify(q.arguments, null, 2)));
      var yes = el("button", "approve", "Allow"), no = el("button", "deny", "Refuse");
      yes.onclick = function () { post("/api/consent", { id: q.id, approve: true }).then(refreshApprovals); };
      no.onclick = function () { post("/api/consent", { id: q.id, approve: false }).then(refreshApprovals); };
      d.appendChild(yes); d.appendChild(no);
      box.appendChild(d);
    });
  }
  var lastApprovals = "";
  function refreshApprovals() {
    return fetch("/api/approvals", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (a) {
      // Redraw only on a change, so that a reason being typed is kept.
      var key = JSON.stringify(a);
      if (key === lastApprovals) return;
      lastApprovals = key;
      renderConsent(page === "approvals" ? [] : a.consent);
      if (page === "approvals") renderApprovals(a);
    }).catch(function () { });
  }
  on("approvals", refreshApprovals);
  on("open", refreshApprovals);

  // callView shows a request's arguments and, beside them, the details its
  // driver adds for the person deciding (a mail draft in full).
  function callView(r) {
    var box = el("div", "call");
    var args = el("div", "part");
    args.appendChild(el("h4", null, "Arguments"));
    args.appendChild(el("pre", "args", JSON.stringify(r.arguments, null, 2)));
    box.appendChild(args);
    if (r.details !== undefined) {
      var det = el("div", "part");
      det.appendChild(el("h4", null, "Details from the driver"));
      det.appendChild(el("pre", "details", JSON.stringify(r.details, null, 2)));
      box.appendChild(det);
    }
    return box;
  }

  function renderApprovals(a) {
    var err = document.getElementById("approvals-error");
    err.hidden = !a.error; err.textContent = a.error || "";
    var qs = document.getElementById("questions");
    qs.textContent = "";
    if (a.consent.length === 0) qs.appendChild(el("p", "empty", "No question waits."));
    a.consent.forEach(function (q) {
      var d = el("div", "request question");
      d.dataset.id = q.id;
      d.appendChild(el("p", null, q.tool + " (asked " + when(q.asked) + ")"));
      d.appendChild(el("pre", "args", JSON.stringify(q.arguments, null, 2)));
      var yes = el("button", "approve", "Allow"), no = el("button", "deny", "Refuse");
      yes.onclick = function () { post("/api/consent", { id: q.id, approve: true }).then(refreshApprovals); };
      no.onclick = function () { post("/api/consent", { id: q.id, approve: false }).then(refreshApprovals); };
      d.appendChild(yes); d.appendChild(no);
      qs.appendChild(d);
    });
    var pend = document.getElementById("pending");
    pend.textContent = "";
    if (!a.store) pend.appendChild(el("p", "empty", 'The stack has no approval store (ask = "queue").'));
    else if (a.pending.length === 0) pend.appendChild(el("p", "empty", "No request waits."));
    a.pending.forEach(function (r) {
      var d = el("div", "request");
      d.dataset.id = r.id;
      d.appendChild(el("p", null, (r.label ? r.label + ": " : "") + r.tool + " — " + r.id + " (made " + when(r.created) + ", expires " + when(r.expires) + ")"));
      d.appendChild(callView(r));
      var reason = el("input", "reason");
      reason.placeholder = "reason (kept with the decision; a denial's is given to the model)";
      var yes = el("button", "approve", "Approve"), no = el("button", "deny", "Deny");
      function decide(approve) {
        post("/api/approvals/decide", { id: r.id, approve: approve, reason: reason.value }).then(function (res) {
          if (res.error) { err.hidden = false; err.textContent = res.error; }
          refreshApprovals();
        });
      }
      yes.onclick = function () { decide(true); };
      no.onclick = function () { decide(false); };
      d.appendChild(reason); d.appendChild(yes); d.appendChild(no);
      pend.appendChild(d);
    });
    var tb = document.getElementById("decided");
    tb.textContent = "";
    a.decided.forEach(function (r) {
      var tr = el("tr");
      tr.dataset.id = r.id;
      var dec = r.decision || {};
      [r.id, r.state, (r.label ? r.label + ": " : "") + r.tool,
        JSON.stringify(r.arguments) + (r.details !== undefined ? "\ndetails: " + JSON.stringify(r.details) : ""),
        r.decision ? (dec.approve ? "approved" : "denied") : "-", dec.by || "-", when(dec.at), dec.reason || ""].forEach(function (v) {
          tr.appendChild(el("td", null, v));
        });
      var td = el("td");
      if (r.state === "approved" && a.queue) {
        var run = el("button", "run", "Run now");
        run.onclick = function () {
          post("/api/approvals/run", { id: r.id }).then(function (o) {
            showOutcome(document.getElementById("run-outcome"), o); refreshApprovals();
          });
        };
        td.appendChild(run);
      }
      tr.appendChild(td);
      tb.appendChild(tr);
    });
  }

  function initTools() {
    var search = document.getElementById("search");
    if (!search) return;
    var tools = Array.prototype.slice.call(document.querySelectorAll(".tool"));
    search.addEventListener("input", function () {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean), n = 0;
      tools.forEach(function (t) {
        var hit = words.every(function (w) { return t.dataset.search.indexOf(w) >= 0; });
        t.hidden = !hit;
        if (hit) n++;
      });
      document.getElementById("count").textContent = n;
      if (n === 1) tools.forEach(function (t) { if (!t.hidden) t.open = true; });
    });
    document.querySelectorAll("form.run").forEach(function (f) {
      f.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var fields = {};
        Array.prototype.forEach.call(f.elements, function (e) { if (e.name) fields[e.name] = e.value; });
        var box = f.parentNode.querySelector(".outcome"), btn = f.querySelector("button");
        btn.disabled = true;
        showOutcome(box, { kind: "running", title: "Running…", text: "" });
        post("/api/run", { tool: f.dataset.tool, fields: fields }).then(function (o) {
          btn.disabled = false;
          showOutcome(box, o);
        });
      });
    });
  }

  function initProcess() {
    var f = document.getElementById("process");
    if (!f) return;
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      post("/api/process", { reply: f.elements.reply.value }).then(function (a) {
        var out = document.getElementById("process-out");
        out.hidden = false;
        var err = out.querySelector(".error");
        err.hidden = !a.error; err.textContent = a.error || "";
        var tb = out.querySelector("tbody");
        tb.textContent = "";
        (a.calls || []).forEach(function (c) {
          var tr = el("tr", c.owned ? "owned" : "unowned");
          [c.name, c.id || "-", c.owned ? "yes" : "no", c.outcome].forEach(function (v) { tr.appendChild(el("td", null, v)); });
          tb.appendChild(tr);
        });
        out.querySelector(".response").textContent = a.response || "";
      });
    });
  }

  function initAudit() {
    var tb = document.getElementById("audit");
    if (!tb) return;
    var seen = {};
    on("audit", function (r) {
      var f = r.fields || {};
      var key = r.time + r.msg + JSON.stringify(f);
      if (seen[key]) return;
      seen[key] = true;
      var tr = el("tr", "level-" + String(r.level).toLowerCase());
      var rest = {};
      Object.keys(f).forEach(function (k) { if (k !== "tool" && k !== "outcome" && k !== "decision") rest[k] = f[k]; });
      [when(r.time), r.msg, f.tool || "", f.outcome || f.decision || "", JSON.stringify(rest)].forEach(function (v) {
        tr.appendChild(el("td", null, v));
      });
      tb.insertBefore(tr, tb.firstChild);
    });
  }

  function initChat() {
    var f = document.getElementById("chat");
    if (!f) return;
    var log = document.getElementById("chat-log");
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var msg = f.elements.message.value;
      if (!msg.trim()) return;
      log.appendChild(el("p", "you", msg));
      f.elements.message.value = "";
      var wait = el("p", "waiting", "…");
      log.appendChild(wait);
      post("/api/chat", { message: msg }).then(function (a) {
        log.removeChild(wait);
        (a.calls || []).forEach(function (c) { log.appendChild(el("p", "call", "→ " + c.name + " " + c.arguments + "  ← " + c.outcome)); });
        if (a.error) log.appendChild(el("p", "error", a.error));
        else log.appendChild(el("p", "model", a.text));
      });
    });
    document.getElementById("chat-reset").onclick = function () {
      post("/api/chat/reset", {}).then(function () { log.textContent = ""; });
    };
  }

  // The Auth page: sign in and sign out; it reloads when a sign-in starts or
  // ends ("auth" events).
  function initAuth() {
    if (page !== "auth") return;
    var err = document.getElementById("auth-error");
    function act(btn, path, body) {
      btn.disabled = true;
      post(path, body).then(function (res) {
        btn.disabled = false;
        if (res.error) { err.hidden = false; err.textContent = res.error; return; }
        location.reload();
      });
    }
    document.querySelectorAll("button.signin-start").forEach(function (b) {
      b.onclick = function () {
        act(b, "/api/auth/signin", { label: b.closest("section").dataset.label, scope: b.dataset.scope });
      };
    });
    document.querySelectorAll("button.signout").forEach(function (b) {
      b.onclick = function () { act(b, "/api/auth/signout", { label: b.dataset.label }); };
    });
  }

  on("auth", function () { if (page === "auth") location.reload(); });
  initAuth();
  initTools();
  initProcess();
  initAudit();
  initChat();
  connect();
})();
