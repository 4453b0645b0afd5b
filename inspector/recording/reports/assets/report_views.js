// mcp-inspect report: the parts around the timeline (header, problems, what was masked, tool calls, restarts).
// Every piece of recorded text goes in with textContent, never as markup: the recording is the server's words.
"use strict";

var Report = {
  CUT: 256 * 1024,  // longer JSON is shown cut, as on the page

  el: function (tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  },

  add: function (parent, tag, cls, text) {
    var node = Report.el(tag, cls, text);
    parent.appendChild(node);
    return node;
  },

  pretty: function (value) {
    var text;
    try { text = JSON.stringify(value, null, 2); } catch (e) { text = String(value); }
    if (text === undefined) text = String(value);
    if (text.length > Report.CUT) text = text.slice(0, Report.CUT) + "\n… cut at 256 KB";
    return text;
  },

  pad: function (n, width) { var s = String(n); while (s.length < width) s = "0" + s; return s; },

  clock: function (t) {
    if (typeof t !== "number") return "";
    var d = new Date(t * 1000);
    return Report.pad(d.getHours(), 2) + ":" + Report.pad(d.getMinutes(), 2) + ":" + Report.pad(d.getSeconds(), 2) +
      "." + Report.pad(d.getMilliseconds(), 3);
  },

  when: function (t) { return typeof t === "number" ? new Date(t * 1000).toISOString().replace("T", " ") : ""; },

  latency: function (ms) {
    if (typeof ms !== "number") return "";
    return ms < 1000 ? ms.toFixed(ms < 10 ? 1 : 0) + " ms" : (ms / 1000).toFixed(2) + " s";
  },

  size: function (n) {
    if (n < 1024) return n + " B";
    return n < 1048576 ? (n / 1024).toFixed(1) + " KB" : (n / 1048576).toFixed(1) + " MB";
  },

  // A link-like button that shows row #seq in the timeline (set by report.js).
  jump: function (seq, label) {
    var button = Report.el("button", "jump", label === undefined ? "#" + seq : label);
    button.type = "button";
    button.dataset.seq = String(seq);
    return button;
  },

  header: function (root, s, notes) {
    var name = [s.server, s.version].filter(Boolean).join(" ") || "a recorded session";
    Report.add(root, "h1", null, "mcp-inspect report: " + name);
    var facts = Report.add(root, "dl", "facts");
    var span = (typeof s.first_t === "number" && typeof s.last_t === "number") ?
      Report.when(s.first_t) + " → " + Report.when(s.last_t) + " (" + Report.latency((s.last_t - s.first_t) * 1000) + ")" : "";
    var counts = Object.keys(s.counts || {}).map(function (k) { return s.counts[k] + " " + k; }).join(", ");
    [["server", s.server], ["version", s.version],
     ["era", s.era ? s.era + (s.protocol_version ? " (protocol " + s.protocol_version + ")" : "") : null],
     ["transport", s.transport], ["command", s.command ? s.command.join(" ") : null], ["url", s.url],
     ["working directory", s.cwd], ["environment", s.env.length ? s.env.join(", ") + " (values never recorded)" : null],
     ["recorded by", s.recorded_by ? "mcp-inspect " + s.recorded_by : null],
     ["report by", "mcp-inspect " + s.reported_by], ["recording started", s.created], ["records", span],
     ["counts", s.records + " records" + (counts ? ": " + counts : "") + (s.restarts ? "; " + s.restarts + " restarts" : "")]
    ].forEach(function (pair) {
      if (pair[1] === null || pair[1] === undefined || pair[1] === "") return;
      Report.add(facts, "dt", null, pair[0]);
      Report.add(facts, "dd", pair[0] === "command" || pair[0] === "url" ? "mono" : null, pair[1]);
    });
    if (notes.length) {
      var box = Report.add(root, "details", "notes");
      Report.add(box, "summary", null, notes.length + " line" + (notes.length === 1 ? "" : "s") + " of the recording could not be read");
      var list = Report.add(box, "ul");
      notes.forEach(function (note) { Report.add(list, "li", null, note); });
    }
  },

  problems: function (root, problems) {
    var box = Report.add(root, "details", "problems" + (problems.length ? " has-problems" : ""));
    box.id = "problems";
    if (problems.length) box.open = true;
    Report.add(box, "summary", null, problems.length + " problem" + (problems.length === 1 ? "" : "s"));
    if (!problems.length) { Report.add(box, "p", "note", "No protocol problems in this recording."); return; }
    var list = Report.add(box, "ol");
    problems.forEach(function (p) {
      var item = Report.add(list, "li");
      var link = item.appendChild(Report.jump(p.seq, ""));
      Report.add(link, "code", null, p.rule);
      link.appendChild(document.createTextNode(" on #" + p.seq));
      item.appendChild(document.createTextNode(": " + p.text + " "));
      if (p.fix) Report.add(item, "span", "fix", p.fix);
    });
  },

  masked: function (root, masked) {
    var box = Report.add(root, "details", "masked");
    Report.add(box, "summary", null, masked.length + " value" + (masked.length === 1 ? "" : "s") +
      " masked by redaction (look through the report before you share it: a scan cannot know every secret)");
    var list = Report.add(box, "ul");
    masked.forEach(function (m) {
      Report.add(list, "li", null, "masked " + m.kind + ": " + (m.seq === null ? "header" : "record " + m.seq) + " " + m.path);
    });
  },

  calls: function (root, calls) {
    var box = Report.add(root, "details", "calls");
    box.open = calls.length > 0 && calls.length <= 20;
    Report.add(box, "summary", null, calls.length + " tool call" + (calls.length === 1 ? "" : "s"));
    var shown = calls.slice(-200);
    if (shown.length < calls.length) Report.add(box, "p", "note", "The last 200 calls; every call is in the timeline.");
    shown.forEach(function (c) {
      var card = Report.add(box, "article", "call state-" + c.state);
      var head = Report.add(card, "header");
      Report.add(head, "strong", "call-name", c.name);
      Report.add(head, "span", "call-state", {ok: "ok", "tool-error": "tool error (isError)", error: "JSON-RPC error",
        pending: "no answer"}[c.state]);
      Report.add(head, "span", "call-time", Report.latency(c.ms));
      head.appendChild(Report.jump(c.seq, "request #" + c.seq));
      if (c.answer_seq !== null) head.appendChild(Report.jump(c.answer_seq, "answer #" + c.answer_seq));
      Report.add(card, "h4", null, "arguments");
      Report.add(card, "pre", "json", Report.pretty(c.arguments));
      if (c.state !== "pending") {
        Report.add(card, "h4", null, c.state === "error" ? "error" : "result");
        Report.add(card, "pre", "json", Report.pretty(c.result));
      }
    });
  },

  restarts: function (root, restarts) {
    if (!restarts.length) return;
    var box = Report.add(root, "details", "restarts");
    box.open = true;
    Report.add(box, "summary", null, restarts.length + " restart" + (restarts.length === 1 ? "" : "s"));
    restarts.forEach(function (r) {
      var part = Report.add(box, "section", "restart");
      var head = Report.add(part, "p");
      head.appendChild(Report.jump(r.seq));
      head.appendChild(document.createTextNode(" " + Report.clock(r.t) + " " + r.text));
      var list = Report.add(part, "ul", "restart-events");
      r.events.forEach(function (e) { Report.add(list, "li", null, "#" + e.seq + " " + e.text); });
      r.diffs.forEach(function (d) { part.appendChild(Report.diff(d.detail)); });
      if (!r.diffs.length) Report.add(part, "p", "note", "No diff recorded after this restart.");
    });
  },

  // What changed after a restart or a list_changed (the page's _diff.html, as DOM).
  diff: function (detail) {
    var box = Report.el("div", "diff");
    Report.add(box, "p", "diff-summary", detail.summary);
    var sections = detail.sections && typeof detail.sections === "object" ? detail.sections : {};
    Object.keys(sections).forEach(function (name) {
      var change = sections[name] || {};
      var part = Report.add(box, "section", "diff-section");
      Report.add(part, "h4", null, name);
      if (Array.isArray(change.added) && change.added.length) Report.add(part, "p", "diff-added", "+ added: " + change.added.join(", "));
      if (Array.isArray(change.removed) && change.removed.length) Report.add(part, "p", "diff-removed", "− removed: " + change.removed.join(", "));
      var changed = change.changed && typeof change.changed === "object" ? change.changed : {};
      Object.keys(changed).forEach(function (item) {
        Report.add(part, "p", "diff-changed", "~ " + item);
        (changed[item] || []).forEach(function (field) { part.appendChild(Report.field(field)); });
      });
      (Array.isArray(change.changes) ? change.changes : []).forEach(function (field) { part.appendChild(Report.field(field)); });
    });
    return box;
  },

  field: function (field) {
    var box = Report.el("div", "diff-field");
    Report.add(box, "code", "diff-path", field.path || "(whole value)");
    var values = Report.add(box, "div", "diff-values");
    ["before", "after"].forEach(function (side) {
      var cell = Report.add(values, "div", "diff-" + side);
      if (side in field) Report.add(cell, "pre", null, typeof field[side] === "string" ? field[side] : Report.pretty(field[side]));
      else Report.add(cell, "em", null, "(absent)");
    });
    return box;
  }
};
