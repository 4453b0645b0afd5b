// mcp-inspect report: unpack the embedded recording, then show it. The timeline is windowed: only the rows in
// view (and a few around them) exist in the DOM, so a 100,000-message recording opens and searches at once.
"use strict";

(function () {
  var R = Report;
  var ROW_H = 22, AROUND = 8, PREVIEW = 200;
  var records = [], rows = [], texts = null, warned = {};
  var filters = {dir: "", kind: "", method: "", stderr: true, q: ""};
  var entries = [];          // what the timeline shows: {seq, list: [record indexes]} (a stderr run is one entry)
  var opened = new Map();    // seq of an opened entry -> its measured height
  var offsets = new Float64Array(1);
  var nodes = new Map();     // seq -> the row element now in the window
  var viewport, sizer, count, form, indexBySeq = new Map();

  function unpack() {
    var text = atob(document.getElementById("report-data").textContent.trim());
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // -- filters and search (over the whole recording, like the page's) ------------------------------------------

  function text(i) {
    if (texts === null) texts = new Array(records.length);
    if (texts[i] === undefined) texts[i] = JSON.stringify(records[i]).toLowerCase();
    return texts[i];
  }

  function passes(i) {
    var row = rows[i], record = records[i];
    if (row.kind === "stderr" && !filters.stderr) return false;
    if (filters.dir && (row.kind === "stderr" ? "from_server" : record.dir) !== filters.dir) return false;
    if (filters.kind && row.kind !== filters.kind) return false;
    if (filters.method && !(row.method && row.method.toLowerCase().indexOf(filters.method) >= 0)) return false;
    return !filters.q || text(i).indexOf(filters.q) >= 0;
  }

  function rebuild() {
    entries = [];
    var last = null;
    for (var i = 0; i < records.length; i++) {
      if (!passes(i)) continue;
      if (rows[i].kind === "stderr" && last !== null && rows[last.list[0]].kind === "stderr") {
        last.list.push(i);  // stderr lines shown one after another read as one block, as a terminal shows them
        continue;
      }
      last = {seq: records[i].seq, list: [i]};
      entries.push(last);
    }
    var filtered = filters.dir || filters.kind || filters.method || !filters.stderr || filters.q;
    count.textContent = !filtered ? records.length + " records" :
      "showing " + entries.length + (entries.length === 1 ? " row" : " rows") + " of " + records.length + " records";
    layout();
  }

  function readFilters() {
    filters = {dir: form.dir.value, kind: form.kind.value, method: form.method.value.trim().toLowerCase(),
      stderr: form.stderr.checked, q: form.q.value.trim().toLowerCase()};
    rebuild();
    viewport.scrollTop = viewport.scrollHeight;  // the newest matching rows, as the page shows
    draw();
  }

  // -- the window -----------------------------------------------------------------------------------------------

  function layout() {
    offsets = new Float64Array(entries.length + 1);
    var y = 0;
    for (var i = 0; i < entries.length; i++) {
      offsets[i] = y;
      y += opened.has(entries[i].seq) ? opened.get(entries[i].seq) : ROW_H;
    }
    offsets[entries.length] = y;
    sizer.style.height = y + "px";
  }

  function at(y) {  // the entry under height y
    var low = 0, high = entries.length - 1;
    while (low < high) {
      var mid = (low + high + 1) >> 1;
      if (offsets[mid] <= y) low = mid; else high = mid - 1;
    }
    return Math.max(0, low);
  }

  function draw() {
    var first = Math.max(0, at(viewport.scrollTop) - AROUND);
    var last = Math.min(entries.length - 1, at(viewport.scrollTop + viewport.clientHeight) + AROUND);
    var keep = new Map(), changed = false, previous = null;
    for (var i = first; i <= last; i++) {
      var entry = entries[i], node = nodes.get(entry.seq);
      if (!node || node.dataset.open !== String(opened.has(entry.seq))) node = rowNode(entry);
      node.classList.toggle("odd", i % 2 === 1);
      node.style.top = offsets[i] + "px";
      keep.set(entry.seq, node);
      // in document order too, so reading, copying and the keyboard follow the rows as shown
      var before = previous ? previous.nextSibling : sizer.firstChild;
      if (node !== before) sizer.insertBefore(node, before);
      previous = node;
    }
    nodes.forEach(function (node, seq) { if (keep.get(seq) !== node) node.remove(); });  // gone, or redrawn
    nodes = keep;
    keep.forEach(function (node, seq) {  // an opened row is as tall as its content
      if (opened.has(seq) && opened.get(seq) !== node.offsetHeight) { opened.set(seq, node.offsetHeight); changed = true; }
    });
    if (changed) { layout(); draw(); }
  }

  // -- one row -----------------------------------------------------------------------------------------------------

  function cell(parent, cls, value) { return R.add(parent, "span", cls, value); }

  function preview(i) {
    var record = records[i], row = rows[i], msg = record.msg;
    if (row.text) return row.text;
    if (record.kind === "stderr") return record.text;
    if (record.kind === "invalid") return record.error + ": " + record.raw;
    if (msg && typeof msg === "object" && !Array.isArray(msg)) {
      var value = "params" in msg ? msg.params : "result" in msg ? msg.result : msg.error;
      return value === undefined ? "" : JSON.stringify(value);
    }
    return JSON.stringify(msg);
  }

  function rowNode(entry) {
    var i = entry.list[0], record = records[i], row = rows[i], group = entry.list.length > 1;
    var node = R.el("div", "row kind-" + row.kind + " dir-" + (record.dir || "none"));
    node.dataset.seq = String(entry.seq);
    node.dataset.open = String(opened.has(entry.seq));
    var head = R.add(node, "div", "summary");
    head.tabIndex = 0;
    head.setAttribute("role", "button");
    head.setAttribute("aria-expanded", node.dataset.open);
    cell(head, "c-time", R.clock(record.t));
    cell(head, "c-dir", record.dir === "to_server" ? "→" : record.dir === "from_server" || row.kind === "stderr" ? "←" : "·");
    R.add(cell(head, "c-kind"), "span", "badge k-" + row.kind, row.kind);
    var method = cell(head, "c-method", group ? entry.list.length + " lines" : row.method || "");
    if (row.late) R.add(method, "span", "flag flag-late", "late");
    if (record.origin === "user") R.add(method, "span", "flag", "hand-made");
    if (warned[record.seq]) R.add(method, "span", "flag flag-warning", "⚠ problem").title = warned[record.seq];
    var id = cell(head, "c-id", record.msg && typeof record.msg === "object" && "id" in record.msg ? JSON.stringify(record.msg.id) + " " : "");
    if (row.pair !== null) id.appendChild(R.jump(row.pair, (row.kind === "response" || row.kind === "error" ? "↑ #" : "↓ #") + row.pair));
    cell(head, "c-latency", R.latency(row.ms));
    cell(head, "c-size", group ? "" : R.size(JSON.stringify(record.msg || record.text || record.raw || record.detail || "").length));
    cell(head, "c-preview", "#" + record.seq + " " + String(preview(i)).slice(0, PREVIEW));
    if (opened.has(entry.seq)) node.appendChild(body(entry));
    return node;
  }

  function body(entry) {
    var box = R.el("div", "row-body");
    var i = entry.list[0], record = records[i], row = rows[i];
    if (entry.list.length > 1) {
      R.add(box, "pre", "text", entry.list.map(function (j) { return "#" + records[j].seq + "  " + R.clock(records[j].t) + "  " + records[j].text; }).join("\n"));
      return box;
    }
    var actions = R.add(box, "div", "record-actions");
    if (row.pair !== null) actions.appendChild(R.jump(row.pair, (row.kind === "response" || row.kind === "error" ? "its request #" : "its response #") + row.pair));
    if (warned[record.seq]) R.add(box, "p", "problem", "⚠ " + warned[record.seq]);
    if (record.http) R.add(box, "pre", "http-meta", "HTTP " + R.pretty(record.http));
    if (record.kind === "stderr") R.add(box, "pre", "text", record.text);
    else if (record.kind === "invalid") { R.add(box, "p", "problem", record.error); R.add(box, "pre", "text", record.raw); }
    else if (record.kind === "event" && record.event === "diff") box.appendChild(R.diff(record.detail || {}));
    else if (record.kind === "event") { R.add(box, "p", null, row.text); R.add(box, "pre", "json", R.pretty(record.detail)); }
    else R.add(box, "pre", "json", R.pretty(record.msg));
    return box;
  }

  function toggle(seq) {
    if (opened.has(seq)) opened.delete(seq); else opened.set(seq, ROW_H * 4);
    layout();
    draw();
  }

  // Show row #seq: clear the filters if they hide it, open it and scroll it to the top.
  function show(seq) {
    var i = indexBySeq.get(seq);
    if (i === undefined) return;
    var where = entries.findIndex(function (e) { return e.list.indexOf(i) >= 0; });
    if (where < 0) { form.reset(); readFilters(); where = entries.findIndex(function (e) { return e.list.indexOf(i) >= 0; }); }
    if (where < 0) return;
    if (!opened.has(entries[where].seq)) opened.set(entries[where].seq, ROW_H * 4);
    layout();
    viewport.scrollTop = offsets[where];
    draw();
    var node = nodes.get(entries[where].seq);
    if (node) { node.classList.add("target"); node.scrollIntoView({block: "nearest"}); }
  }

  // -- the page ------------------------------------------------------------------------------------------------

  function build(data) {
    records = data.records;
    rows = data.rows;
    records.forEach(function (r, i) { indexBySeq.set(r.seq, i); });
    data.problems.forEach(function (p) { warned[p.seq] = (warned[p.seq] ? warned[p.seq] + "; " : "") + p.rule + ": " + p.text; });
    var main = document.getElementById("report");
    main.textContent = "";  // the "Opening" note
    var top = R.add(main, "header", "report-head");
    R.header(top, data.summary, data.notes);
    R.problems(main, data.problems);
    R.masked(main, data.masked);
    R.restarts(main, data.restarts);
    R.calls(main, data.calls);
    var section = R.add(main, "section", "timeline");
    R.add(section, "h2", null, "Timeline");
    form = document.getElementById("filters");
    section.appendChild(form);
    form.hidden = false;
    count = R.add(form, "span", "count");
    var head = R.add(section, "div", "row-head");
    ["time", "", "kind", "method", "id", "latency", "size", "preview"].forEach(function (name) { cell(head, null, name); });
    viewport = R.add(section, "div", "viewport");
    viewport.id = "timeline";
    sizer = R.add(viewport, "div", "sizer");
    rebuild();
    viewport.scrollTop = viewport.scrollHeight;
    draw();
    var pending = 0;
    viewport.addEventListener("scroll", function () {
      if (!pending) pending = requestAnimationFrame(function () { pending = 0; draw(); });
    });
    window.addEventListener("resize", draw);
    var typing = 0;
    form.addEventListener("input", function () { clearTimeout(typing); typing = setTimeout(readFilters, 250); });
    form.addEventListener("change", readFilters);
    form.addEventListener("submit", function (event) { event.preventDefault(); readFilters(); });
    document.addEventListener("click", function (event) {
      var jump = event.target.closest(".jump");
      if (jump) { event.preventDefault(); event.stopPropagation(); show(Number(jump.dataset.seq)); return; }
      var summary = event.target.closest(".row > .summary");
      if (summary) toggle(Number(summary.parentNode.dataset.seq));
    });
    document.addEventListener("keydown", function (event) {
      var summary = event.target.closest && event.target.closest(".row > .summary");
      if (summary && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); toggle(Number(summary.parentNode.dataset.seq)); }
    });
    document.body.dataset.ready = "true";
  }

  unpack().then(build, function (error) {
    var main = document.getElementById("report");
    main.textContent = "";
    R.add(main, "p", "problem", "This report's data could not be read: " + error);
  });
})();
