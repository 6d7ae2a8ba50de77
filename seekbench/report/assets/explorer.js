/* seekbench trace explorer: renders only; every number comes from Python (seekbench/analysis/_explorer_data.py).
   Data arrives through sidecar scripts that call SEEKBENCH_DATA(kind, key, data): the index at once, the
   trace details chunk by chunk when needed (browsers block fetching local files under file://). */
(function () {
  "use strict";
  var DIR = document.body.getAttribute("data-dir") || "explorer-data";
  var PAGE_SIZE = 50, CACHE_CHUNKS = 8;
  var META = null, IDX = null, N = 0;
  var chunks = new Map(), waiting = new Map();
  var state = {agent: "all", flag: "all", correct: "all", E: "all", dis: "all", q: "", sort: "score",
               page: 0, focus: null};
  var expanded = new Set();
  var search = {token: 0, q: "", hits: null, scanned: 0, total: 0, done: true, ms: 0};
  var qLower = null;

  function $(sel, root) { return (root || document).querySelector(sel); }
  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function pad5(k) { var s = String(k); while (s.length < 5) s = "0" + s; return s; }
  function fmtE(e) { return e == null || e < 0 ? "–" : String(e); }
  function fmtCorrect(c) { return c === 1 || c === true ? "correct" : (c === 0 || c === false ? "incorrect" : "unknown"); }

  window.SEEKBENCH_DATA = function (kind, key, data) {
    if (kind === "index") { META = data.meta; IDX = data.index; N = IDX.id.length; start(); return; }
    chunks.delete(key);
    chunks.set(key, data);
    while (chunks.size > CACHE_CHUNKS) chunks.delete(chunks.keys().next().value);
    (waiting.get(key) || []).forEach(function (w) { w.resolve(data); });
    waiting.delete(key);
  };

  function addScript(src, onerror) {
    var s = document.createElement("script");
    s.src = src;
    s.onload = function () { s.remove(); };
    s.onerror = function () { s.remove(); onerror(); };
    document.head.appendChild(s);
  }

  function loadChunk(k) {
    if (chunks.has(k)) {
      var d = chunks.get(k); chunks.delete(k); chunks.set(k, d);
      return Promise.resolve(d);
    }
    return new Promise(function (resolve, reject) {
      var first = !waiting.has(k);
      if (first) waiting.set(k, []);
      waiting.get(k).push({resolve: resolve, reject: reject});
      if (first) addScript(DIR + "/chunk-" + pad5(k) + ".js", function () {
        var msg = "could not load " + DIR + "/chunk-" + pad5(k) + ".js (missing file? keep the folder next to the page)";
        (waiting.get(k) || []).forEach(function (w) { w.reject(new Error(msg)); });
        waiting.delete(k);
        status(msg, true);
      });
    });
  }

  function detailOf(pos) {
    var k = Math.floor(pos / META.chunk_size);
    return loadChunk(k).then(function (c) { return c[pos - k * META.chunk_size]; });
  }

  function status(msg, bad) {
    var el = $("#status");
    if (el) { el.textContent = msg; el.className = bad ? "status bad" : "status"; }
  }

  /* ---------- filtering and sorting (index only) ---------- */
  var rowSets = new Map();
  function agreeRows() { return META.agreement ? META.agreement.rows : []; }
  function rowTraces(r) {  // the traces where row r's rater disagrees in its stratum (listed in the data)
    if (!rowSets.has(r)) rowSets.set(r, new Set((agreeRows()[r] || {traces: []}).traces));
    return rowSets.get(r);
  }
  function pooled(row) { return row.field === "all (pooled)"; }
  function rowName(row) { return row.rater + " · " + row.field + (pooled(row) ? "" : " (" + row.step_kind + ")"); }
  function inRow(d, row) {  // a trace's disagreement d is one of row's
    return d.rater === row.rater && (pooled(row) || (d.field === row.field && d.kind === row.step_kind));
  }
  function passes(i, ignoreText) {
    if (state.agent !== "all" && IDX.agent[i] !== +state.agent) return false;
    var f = IDX.flags[i];
    if (state.flag === "any" && !f) return false;
    if (state.flag === "none" && f) return false;
    if (state.flag !== "all" && state.flag !== "any" && state.flag !== "none" && !(f & (1 << +state.flag))) return false;
    if (state.correct !== "all" && IDX.correct[i] !== +state.correct) return false;
    if (state.E !== "all" && IDX.E[i] !== +state.E) return false;
    if (state.dis === "yes" && !IDX.dis[i]) return false;
    if (state.dis === "no" && IDX.dis[i]) return false;
    if (state.dis.slice(0, 2) === "r:" && !rowTraces(+state.dis.slice(2)).has(i)) return false;
    if (!ignoreText && state.q) {
      if (qLower[i].indexOf(state.q) < 0 && !(search.q === state.q && search.hits && search.hits.has(i))) return false;
    }
    return true;
  }

  function eKey(i) { return IDX.E[i] < 0 ? 9 : IDX.E[i]; }  // traces without an answer sort last

  var SORTS = {
    score: function (a, b) { return IDX.score[b] - IDX.score[a] || a - b; },
    steps: function (a, b) { return IDX.steps[b] - IDX.steps[a] || a - b; },
    E: function (a, b) { return eKey(a) - eKey(b) || a - b; },
    dis: function (a, b) { return IDX.dis[b] - IDX.dis[a] || a - b; },
    agent: function (a, b) { return IDX.agent[a] - IDX.agent[b] || a - b; },
    id: function (a, b) { return IDX.id[a] < IDX.id[b] ? -1 : (IDX.id[a] > IDX.id[b] ? 1 : a - b); },
    input: function (a, b) { return a - b; }
  };

  function visible() {
    if (state.focus != null) return [state.focus];
    var out = [];
    for (var i = 0; i < N; i++) if (passes(i, false)) out.push(i);
    out.sort(SORTS[state.sort] || SORTS.score);
    return out;
  }

  /* ---------- text search over steps and documents (chunk by chunk) ---------- */
  function traceText(t) {
    var parts = [t.question, t.answer, (t.gold || []).join(" ")];
    (t.steps || []).forEach(function (s) {
      parts.push(s.text, s.query, s.tool);
      (s.docs || []).forEach(function (d) { parts.push(d.title, d.text, d.url); });
    });
    return parts.filter(Boolean).join("\n").toLowerCase();
  }

  function startSearch() {
    var token = ++search.token, q = state.q;
    search.q = q; search.hits = new Set(); search.scanned = 0; search.done = !q;
    if (!q) { render(); return; }
    var need = [];
    for (var k = 0; k < META.n_chunks; k++) {
      var lo = k * META.chunk_size, hi = Math.min(N, lo + META.chunk_size);
      for (var i = lo; i < hi; i++) if (passes(i, true)) { need.push(k); break; }
    }
    search.total = need.length;
    var t0 = performance.now();
    render();
    (function next(j) {
      if (token !== search.token) return;
      if (j >= need.length) {
        search.done = true; search.ms = performance.now() - t0; window.__explorerSearchDone = q;
        render(); return;
      }
      loadChunk(need[j]).then(function (c) {
        if (token !== search.token) return;
        var base = need[j] * META.chunk_size;
        for (var m = 0; m < c.length; m++) if (traceText(c[m]).indexOf(q) >= 0) search.hits.add(base + m);
        search.scanned = j + 1;
        if ((j + 1) % 10 === 0 || j + 1 === need.length) render();
        next(j + 1);
      }, function () { search.done = true; render(); });
    })(0);
  }

  /* ---------- rendering ---------- */
  function option(v, label, cur) {
    return "<option value='" + esc(v) + "'" + (String(cur) === String(v) ? " selected" : "") + ">" + esc(label) + "</option>";
  }

  function controls() {
    var h = "<div class='controls'>";
    h += "<label>Agent <select id='f-agent'>" + option("all", "all agents", state.agent);
    META.agents.forEach(function (a, i) { h += option(i, a, state.agent); });
    h += "</select></label>";
    h += "<label>Flag <select id='f-flag'>" + option("all", "any or none", state.flag) + option("any", "flagged", state.flag) +
         option("none", "not flagged", state.flag);
    META.flags.forEach(function (f, i) { h += option(i, f, state.flag); });
    h += "</select></label>";
    h += "<label>Answer <select id='f-correct'>" + option("all", "all", state.correct) + option(1, "correct", state.correct) +
         option(0, "incorrect", state.correct) + option(-1, "unknown", state.correct) + "</select></label>";
    h += "<label>E at answer <select id='f-E'>" + option("all", "all", state.E) + option(0, "0", state.E) +
         option(1, "1", state.E) + option(2, "2", state.E) + option(-1, "no answer", state.E) + "</select></label>";
    h += "<label>Judge vs reference <select id='f-dis'" + (META.judges.length ? "" : " disabled title='no judge: run with --rater'") +
         ">" + option("all", "all", state.dis);
    if (META.judges.length) {
      h += option("yes", "any rater disagrees", state.dis) + option("no", "no rater disagrees", state.dis);
      agreeRows().forEach(function (row, r) {
        if (row.n_disagree) h += option("r:" + r, rowName(row) + " disagrees", state.dis);
      });
    }
    h += "</select></label>";
    h += "<label>Sort <select id='f-sort'>" + option("score", "worst first (score)", state.sort) +
         option("steps", "most steps", state.sort) + option("E", "lowest E at answer", state.sort) +
         option("dis", "most disagreements", state.sort) + option("agent", "agent", state.sort) +
         option("id", "trace id", state.sort) + option("input", "input order", state.sort) + "</select></label>";
    h += "<label class='grow'>Search <input id='f-q' type='search' placeholder='question, steps, documents' value='" +
         esc(state.q) + "'></label>";
    return h + "</div>";
  }

  function num(x, d) { return x == null ? "n/a" : x.toFixed(d); }
  function withCI(row, k) {
    if (row[k] == null) return "<span title='" + esc(row.note) + "'>n/a</span>";
    return num(row[k], 3) + (row[k + "_lower"] == null ? "" : " <span class='muted'>[" + num(row[k + "_lower"], 2) + ", " +
           num(row[k + "_upper"], 2) + "]</span>");
  }

  function agreementPanel() {
    if (!META.judges.length || !META.agreement) return "";
    var ag = META.agreement;
    var h = "<section class='agree'><h2>Judge vs reference (" + esc(ag.reference) + ")</h2><table><thead><tr>" +
            "<th class='l'>rater</th><th class='l'>field</th><th class='l'>step kind</th><th>compared</th>" +
            "<th>disagree</th><th>agreement</th><th>Cohen's kappa [95% CI]</th><th>AC1 [95% CI]</th></tr></thead><tbody>";
    ag.rows.forEach(function (row, r) {
      var rule = row.rater === "rule-derived";
      h += "<tr class='" + (pooled(row) ? "pooled" : "") + (rule ? " rule" : "") + "' data-rater='" + esc(row.rater) +
           "' data-field='" + esc(row.field) + "' data-kind='" + esc(row.step_kind) + "'><td class='l'" +
           (rule ? " title='labels the judges derived by rule (InitialQuery, RepeatQuery), scored apart from their own'" : "") +
           ">" + esc(row.rater) + "</td><td class='l'>" + esc(row.field) + "</td><td class='l'>" + esc(row.step_kind) +
           "</td><td" + (row.n_excluded ? " title='" + row.n_excluded + " not compared" +
           (row.n_rule_derived ? ", " + row.n_rule_derived + " of them rule-derived" : "") + "'" : "") + ">" +
           row.n_compared + "</td><td>" + (row.n_disagree ? "<a href='#dis=r:" + r + "' class='dislink'>" + row.n_disagree +
           "</a>" : "0") + "</td><td>" + (row.raw_agreement == null ? "n/a" : (100 * row.raw_agreement).toFixed(1) + "%") +
           "</td><td>" + withCI(row, "kappa") + "</td><td>" + withCI(row, "ac1") + "</td></tr>";
    });
    return h + "</tbody></table><p class='muted'>The numbers of <code>seekbench agree</code> on the same labels (" +
           (ag.n_boot ? ag.n_boot + " bootstrap resamples over traces, seed " + esc(ag.seed) : "no bootstrap") +
           "): per label field and step kind, then each rater's strata pooled. Labels a judge derived by rule " +
           "(InitialQuery, RepeatQuery) are not its decisions: they are scored apart as the rater rule-derived. " +
           "Click a count to list the traces where that rater disagrees there; open a trace to see reference and " +
           "rater side by side.</p></section>";
  }

  // The agent's label in the report (its full name when it has none); the full name stays in the filter.
  function agentLabel(i) { return (META.agent_labels && META.agent_labels[i]) || META.agents[i]; }

  function pct(x) { return x == null ? "n/a" : Math.round(100 * x) + "%"; }

  function agentPanel() {
    var h = "<details class='agents' open><summary>Agents: correctness, flag rates and mean score (click a name to list " +
            "its traces worst first; the worst traces of all agents are listed below)</summary><table><thead><tr><th class='l'>agent</th><th>traces</th><th>correct</th>" +
            "<th>flagged</th>" + META.flags.map(function (f) { return "<th>" + esc(f) + "</th>"; }).join("") +
            "<th>mean score</th><th title='" + esc(META.e_unknown_reason || "") + "'>E unknown</th></tr></thead><tbody>";
    (META.agent_rates || []).forEach(function (r) {
      h += "<tr><td class='l'><a href='#agent=" + encodeURIComponent(r.agent) + "&sort=score' title='" + esc(r.agent) + "'>" +
           esc(agentLabel(META.agents.indexOf(r.agent))) + "</a></td><td>" + r.n + "</td><td>" + pct(r.correct) + "</td><td>" + pct(r.flagged) + "</td>" +
           r.flags.map(function (x) { return "<td>" + pct(x) + "</td>"; }).join("") + "<td>" +
           r.mean_score.toFixed(2) + "</td><td title='" + esc(META.e_unknown_reason || "") + "'>" +
           (r.e_unknown == null ? "n/a" : r.e_unknown) + "</td></tr>";
    });
    var unknown = (META.agent_rates || []).some(function (r) { return r.e_unknown > 0; });
    h += "</tbody></table>";
    if (unknown) h += "<p class='muted'>" + esc(META.e_unknown_reason) + "; these traces are left out of " +
      "every E-based number (E at answer, CE, ERF, overconfident and overcautious rates).</p>";
    return h + "</details>";
  }

  function flagChips(mask) {
    var h = "";
    META.flags.forEach(function (f, i) { if (mask & (1 << i)) h += "<span class='flag' title='" + esc(META.flag_definitions[f]) + "'>" + esc(f) + "</span>"; });
    return h;
  }

  function rowHtml(i) {
    var id = IDX.id[i], open = expanded.has(i);
    var h = "<tr class='trace-row" + (open ? " open" : "") + "' data-pos='" + i + "' data-id='" + esc(id) + "' tabindex='0'>" +
      "<td class='l mono'>" + esc(id) + "</td><td class='l' title='" + esc(META.agents[IDX.agent[i]]) + "'>" +
      esc(agentLabel(IDX.agent[i])) + "</td>" +
      "<td class='l q' title='" + esc(IDX.q[i]) + "'><div class='clamp'>" + esc(IDX.q[i]) + "</div></td><td class='" + (IDX.correct[i] === 1 ? "ok" : (IDX.correct[i] === 0 ? "bad" : "")) +
      "'>" + fmtCorrect(IDX.correct[i]) + "</td><td>" + fmtE(IDX.E[i]) + "</td><td>" +
      esc(META.recovery[IDX.rec[i]] || "") + "</td><td class='l'>" + flagChips(IDX.flags[i]) + "</td><td>" +
      IDX.score[i].toFixed(2) + "</td><td>" + IDX.steps[i] + "</td><td>" + (IDX.dis[i] || "") + "</td></tr>";
    if (open) h += "<tr class='detail-row'><td colspan='10'><div class='detail' id='detail-" + i + "'>Loading…</div></td></tr>";
    return h;
  }

  function chipHtml(c, disKeys) {
    var role = c[3], bad = disKeys && (disKeys.has(c[0] + "|" + c[2]) || (role === "judge" && disKeys.has(c[0] + "|=" + c[1])));
    return "<span class='chip role-" + esc(role) + (bad ? " disagree" : "") + "' title='" + esc(role) + " label from " +
           esc(c[2]) + "'><b>" + esc(c[0]) + "</b>: " + esc(c[1]) + " <i>" + esc(c[2]) + "</i></span>";
  }

  function stepHtml(s, dis) {
    var disKeys = new Set();
    dis.forEach(function (d) {
      if (d.step !== s.i) return;
      disKeys.add(d.field + "|" + d.rater); disKeys.add(d.field + "|" + META.reference);
      disKeys.add(d.field + "|=" + d.judge);  // rule-derived and panel labels show on the judges' chips
    });
    var h = "<div class='step k-" + esc(s.kind) + "' data-step='" + s.i + "'><div class='shead'><span class='sk'>step " + s.i +
            "</span><span>turn " + (s.turn == null ? "–" : s.turn) + "</span><span class='kind'>" + esc(s.kind) +
            "</span><span title='evidence state E after this step: 0 none, 1 partial, 2 full (clear and sufficient); – unknown: observations but none labeled'>E after: " + fmtE(s.E) + "</span>" +
            s.chips.map(function (c) { return chipHtml(c, disKeys); }).join("") + "</div>";
    if (s.query) h += "<div class='query'>" + (s.tool ? "<span class='muted'>" + esc(s.tool) + ":</span> " : "") + esc(s.query) + "</div>";
    if (s.url) h += "<div class='muted'>" + esc(s.url) + "</div>";
    if (s.text) h += "<div class='text'>" + esc(s.text) + "</div>";
    (s.docs || []).forEach(function (d) {
      h += "<details class='doc'><summary>[" + esc(d.rank == null ? "" : d.rank) + "] " + esc(d.title || d.url || "document") +
           "</summary><div class='text'>" + esc(d.text || "") + "</div></details>";
    });
    return h + "</div>";
  }

  function detailHtml(t) {
    var h = "<div class='dhead'><p><b>Question:</b> " + esc(t.question) + "</p><p><b>Gold:</b> " + esc((t.gold || []).join(" | ")) +
            " &nbsp; <b>Answer:</b> " + esc(t.answer == null ? "(none)" : t.answer) + " &nbsp; <b>" + fmtCorrect(t.correct) +
            "</b></p><p class='muted'>E at answer " + fmtE(t.E) + " · recovery: " + esc(t.recovery) +
            (t.recovery_turn != null ? " at turn " + t.recovery_turn : "") + " · ungrounded share " +
            (t.ungrounded_share == null ? "n/a" : t.ungrounded_share.toFixed(2)) + " of " + t.n_reasoning_labeled +
            " labeled reasoning steps · repeated queries " + t.repeated_queries + " of " + t.n_queries +
            " · score " + t.score.toFixed(2) + "</p>";
    if (t.flags.length) h += "<ul class='flags'>" + t.flags.map(function (f) { return "<li><b>" + esc(f) + "</b>: " + esc(META.flag_definitions[f]) + "</li>"; }).join("") + "</ul>";
    h += "</div>";
    var dis = t.dis, row = state.dis.slice(0, 2) === "r:" ? agreeRows()[+state.dis.slice(2)] : null;
    if (row) dis = dis.filter(function (d) { return inRow(d, row); });
    if (dis.length) {
      h += "<table class='dis-table'><caption>Judge vs reference: " + dis.length + " disagreement(s)" +
           (row ? " of " + esc(rowName(row)) + (t.dis.length > dis.length ? " (" + t.dis.length + " in all)" : "") : "") +
           "</caption><thead><tr><th>step</th>" +
           "<th>field</th><th class='ref'>reference (" + esc(META.reference) + ")</th><th class='jud'>judge</th><th>judge's explanation</th></tr></thead><tbody>";
      dis.forEach(function (d) {
        h += "<tr data-rater='" + esc(d.rater) + "'><td><a href='#' class='jump' data-step='" + d.step + "'>" + d.step + "</a></td><td>" +
             esc(d.field) + " <span class='muted'>(" + esc(d.kind) + ")</span>" +
             "</td><td class='ref'>" + esc(d.reference) + "</td><td class='jud'>" + esc(d.judge) + " <i>" + esc(d.rater) +
             "</i></td><td class='l'>" + (d.explanation ? esc(d.explanation) : "<span class='muted'>none given</span>") + "</td></tr>";
      });
      h += "</tbody></table>";
    }
    return h + t.steps.map(function (s) { return stepHtml(s, dis); }).join("");
  }

  function fillDetail(i) {
    detailOf(i).then(function (t) {
      var el = document.getElementById("detail-" + i);
      if (el) { el.innerHTML = detailHtml(t); el.setAttribute("data-loaded", "1"); }
    }, function (e) {
      var el = document.getElementById("detail-" + i);
      if (el) el.textContent = e.message;
    });
  }

  function render() {
    var rows = visible(), pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    if (state.page >= pages) state.page = pages - 1;
    var shown = rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
    var s = "";
    if (state.q && !search.done) s = " · searching steps and documents: " + search.scanned + "/" + search.total + " chunks";
    else if (state.q) s = " · text searched in questions, steps and documents";
    $("#count").innerHTML = (state.focus != null ? "1 trace (linked) <a href='#' id='show-all'>show all</a>" :
      "<b>" + rows.length + "</b> of " + N + " traces" + esc(s));
    $("#pager").innerHTML = pages > 1 ? "<button id='prev'" + (state.page ? "" : " disabled") + ">‹ prev</button> page " +
      (state.page + 1) + " of " + pages + " <button id='next'" + (state.page + 1 < pages ? "" : " disabled") + ">next ›</button>" : "";
    $("#rows").innerHTML = shown.map(rowHtml).join("") ||
      "<tr><td colspan='10' class='l muted'>No trace matches these filters.</td></tr>";
    shown.forEach(function (i) { if (expanded.has(i)) fillDetail(i); });
  }

  function readHash() {
    var h = location.hash.replace(/^#/, "");
    if (!h) return;
    var kv = {};
    h.split("&").forEach(function (p) {
      var j = p.indexOf("=");
      if (j > 0) kv[decodeURIComponent(p.slice(0, j))] = decodeURIComponent(p.slice(j + 1));
    });
    state = {agent: "all", flag: "all", correct: "all", E: "all", dis: "all", q: "", sort: "score", page: 0, focus: null};
    expanded.clear();
    if (kv.trace != null) {
      var pos = IDX.id.indexOf(kv.trace);
      if (pos >= 0) { state.focus = pos; expanded.add(pos); }
      else status("trace " + kv.trace + " is not in this explorer", true);
    }
    if (kv.agent != null) { var a = META.agents.indexOf(kv.agent); if (a >= 0) state.agent = String(a); else status("agent " + kv.agent + " is not in this explorer", true); }
    if (kv.flag != null) {
      var fi = META.flags.indexOf(kv.flag);
      if (/^\d+$/.test(kv.flag) || kv.flag === "any" || kv.flag === "none") state.flag = kv.flag;
      else if (fi >= 0) state.flag = String(fi);
      else status("flag " + kv.flag + " is not one of: " + META.flags.join(", "), true);
    }
    ["correct", "E", "dis", "sort"].forEach(function (k) { if (kv[k] != null) state[k] = kv[k]; });
    if (kv.q) state.q = kv.q.toLowerCase();
  }

  function rebuild() {
    $("#controls").innerHTML = controls();
    render();
    if (state.q && search.q !== state.q) startSearch();
  }

  function start() {
    var t0 = performance.now();
    qLower = IDX.q.map(function (q) { return (q || "").toLowerCase(); });
    var m = META, opts = Object.keys(m.audit_options || {}).map(function (k) { return k + "=" + (m.audit_options[k] == null ? "none" : m.audit_options[k]); }).join(", ");
    document.getElementById("app").innerHTML =
      "<header><h1>Trace explorer</h1><p class='muted'>" + N + " traces · " + m.agents.length + " agents · labels: " +
      esc(m.label_source) + (m.judges.length ? " · judges: " + esc(m.judges.join(", ")) : "") + "</p>" +
      "<details class='defs'><summary>What the flags and the score mean</summary><ul>" +
      m.flags.map(function (f) { return "<li><b>" + esc(f) + "</b>: " + esc(m.flag_definitions[f]) + "</li>"; }).join("") +
      "</ul><p>Score = sum over raised flags of: ungrounded share; (2 − E at answer)/2; 1 for not recovered; repeated " +
      "queries / queries. 0 means no flag; at most 4.</p>" + (opts ? "<p class='muted'>Thresholds: " + esc(opts) + "</p>" : "") +
      "</details>" + agentPanel() + "</header>" + agreementPanel() +
      "<div id='controls'></div><div class='bar'><span id='count'></span><span id='pager'></span><span id='status' class='status'></span></div>" +
      "<table class='traces'><thead><tr><th class='l'>trace</th><th class='l'>agent</th><th class='l'>question</th><th>answer</th>" +
      "<th title='evidence state at the answer'>E</th><th title='recovered: reached full evidence (E = 2) or, by default, answered correctly; stopped: answered without recovering; cut_off: ended with neither an answer nor recovery'>recovery</th><th class='l'>flags</th><th>score</th><th>steps</th>" +
      "<th title='judge vs reference disagreements'>dis.</th></tr></thead><tbody id='rows'></tbody></table>" +
      "<footer><details><summary>How this page works</summary><p class='muted' id='datanote'>Data: " + DIR +
      "/index.js (every trace's summary, loaded with the page) and " + m.n_chunks +
      (m.n_chunks === 1 ? " sidecar script " : " sidecar scripts ") + DIR + "/chunk-*.js of up to " + m.chunk_size +
      " traces each, loaded on demand by &lt;script&gt; tags, so the page works from file:// with no server and no " +
      "network. Keep the folder next to the page. Filters, sort and the open trace live in the address (#...), so a " +
      "link opens the same view.</p></details></footer>";
    readHash();
    rebuild();
    wire();
    window.__explorerReady = {ms: performance.now() - t0, n: N};
  }

  function wire() {
    var app = document.getElementById("app");
    app.addEventListener("change", function (e) {
      var id = e.target.id;
      var key = {"f-agent": "agent", "f-flag": "flag", "f-correct": "correct", "f-E": "E", "f-dis": "dis", "f-sort": "sort"}[id];
      if (!key) return;
      state[key] = e.target.value; state.page = 0; state.focus = null;
      if (state.q && key !== "sort") startSearch(); else render();
    });
    var timer = null;
    app.addEventListener("input", function (e) {
      if (e.target.id !== "f-q") return;
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = e.target.value.trim().toLowerCase(); state.page = 0; state.focus = null; startSearch(); }, 250);
    });
    app.addEventListener("click", function (e) {
      var t = e.target;
      if (t.id === "prev") { state.page--; render(); return; }
      if (t.id === "next") { state.page++; render(); return; }
      if (t.id === "show-all") { e.preventDefault(); history.replaceState(null, "", location.pathname); state.focus = null; render(); return; }
      if (t.classList.contains("jump")) {
        e.preventDefault();
        var st = t.closest(".detail").querySelector(".step[data-step='" + t.getAttribute("data-step") + "']");
        if (st) { st.scrollIntoView({block: "center"}); st.classList.add("hl"); }
        return;
      }
      if (t.closest(".detail")) return;
      var row = t.closest("tr.trace-row");
      if (!row) return;
      var i = +row.getAttribute("data-pos");
      if (expanded.has(i)) expanded.delete(i); else expanded.add(i);
      render();
    });
    app.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && e.target.classList && e.target.classList.contains("trace-row")) e.target.click();
    });
    window.addEventListener("hashchange", function () { readHash(); rebuild(); });
  }

  addScript(DIR + "/index.js", function () {
    document.getElementById("app").innerHTML = "<p class='status bad'>Could not load " + DIR + "/index.js: keep the " +
      DIR + " folder next to this page.</p>";
  });
})();
