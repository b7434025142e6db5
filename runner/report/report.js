// agentrun report: filters and sorts the session table and opens a session's details,
// which are embedded gzip-compressed (base64url) in inert script blocks and unpacked on
// demand. Every text of a session is set with textContent: none becomes markup.
"use strict";
(function () {
  const tbody = document.querySelector("#sessions tbody");
  const rows = Array.from(tbody.rows);
  const heads = Array.from(document.querySelectorAll("#sessions thead th"));
  const q = document.getElementById("q");
  const statusSel = document.getElementById("status");
  const shown = document.getElementById("shown");
  const panel = document.getElementById("detail");
  const body = document.getElementById("detail-body");
  const title = document.getElementById("detail-title");
  const cache = new Map();
  let openRow = null;
  let searchText = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // Filter: every word of the query must appear in the row's text.
  function filter() {
    if (!searchText) searchText = rows.map((r) => r.textContent.toLowerCase());
    const words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    const st = statusSel.value;
    let n = 0;
    rows.forEach((r, i) => {
      const s = r.dataset.status;
      const okStatus = !st || (st === "passed" ? s === "success" : st === "failed" ? s !== "success" : s === st);
      const ok = okStatus && words.every((w) => searchText[i].includes(w));
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n === rows.length ? rows.length + " sessions" : n + " of " + rows.length + " sessions";
  }
  q.addEventListener("input", filter);
  statusSel.addEventListener("change", filter);

  // Sort by a column: numbers by their data-v value, text by its content.
  function sortBy(col, dir) {
    const num = heads[col].dataset.type === "num";
    const val = (r) => {
      const c = r.cells[col];
      if (num) return parseFloat(c.dataset.v !== undefined ? c.dataset.v : c.textContent) || 0;
      return c.textContent;
    };
    const keyed = rows.map((r) => [val(r), r.dataset.key, r]);
    keyed.sort((a, b) => {
      const c = num ? a[0] - b[0] : a[0].localeCompare(b[0]);
      return (c || a[1].localeCompare(b[1])) * dir;
    });
    rows.length = 0;
    const frag = document.createDocumentFragment();
    for (const k of keyed) {
      rows.push(k[2]);
      frag.appendChild(k[2]);
    }
    tbody.appendChild(frag);
    searchText = null;
    heads.forEach((h, i) => {
      if (i === col) h.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      else h.removeAttribute("aria-sort");
    });
  }
  heads.forEach((h, i) => h.addEventListener("click", () => sortBy(i, h.getAttribute("aria-sort") === "ascending" ? -1 : 1)));

  // unpack decodes session i's details: base64url, then gzip, then JSON.
  async function unpack(i) {
    if (cache.has(i)) return cache.get(i);
    const src = document.getElementById("d" + i);
    if (!src) throw new Error("this report holds no details for the session");
    if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot decompress the details (no DecompressionStream)");
    const b64 = src.textContent.trim().replace(/-/g, "+").replace(/_/g, "/");
    const bin = atob(b64 + "===".slice((b64.length + 3) % 4));
    const bytes = new Uint8Array(bin.length);
    for (let j = 0; j < bin.length; j++) bytes[j] = bin.charCodeAt(j);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const d = JSON.parse(await new Response(stream).text());
    cache.set(i, d);
    return d;
  }

  function kib(n) {
    return n < 1024 ? n + " B" : (n / 1024).toFixed(1) + " KiB";
  }

  // cutNote says that an excerpt is part of a longer text, and where the rest is.
  function cutNote(x, file) {
    if (!x || !x.cut) return null;
    const part = x.tail ? "the last " : "the first ";
    return el("p", "cut", "Cut: " + part + kib(x.size - x.cut) + " of " + kib(x.size) + (file ? "; the whole of it is " + file + "." : "."));
  }

  function pre(text, diff) {
    const p = el("pre");
    if (!diff) {
      p.textContent = text;
      return p;
    }
    for (const line of text.split("\n")) {
      const head = /^(diff |index |\+\+\+ |--- |@@)/.test(line);
      const c = head ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
      p.appendChild(el("span", c, line + "\n"));
    }
    return p;
  }

  function section(name, open, count) {
    const d = el("details");
    d.open = open;
    d.dataset.part = name.toLowerCase().replace(/ /g, "-");
    d.appendChild(el("summary", null, count === undefined ? name : name + " (" + count + ")"));
    return d;
  }

  function fmtMS(ms) {
    if (ms < 1000) return ms + "ms";
    return (ms / 1000).toFixed(1) + "s";
  }

  function render(d) {
    const r = d.row;
    const frag = document.createDocumentFragment();
    const facts = el("dl", "facts");
    const add = (k, v) => {
      if (v === undefined || v === null || v === "") return;
      const div = el("div");
      div.appendChild(el("dt", null, k));
      div.appendChild(el("dd", null, v));
      facts.appendChild(div);
    };
    add("Status", r.status);
    add("Job", r.job_id);
    add("Provider", r.provider);
    add("Model", r.model);
    if (r.matrix) add("Matrix", Object.keys(r.matrix).sort().map((k) => k + "=" + r.matrix[k]).join(" "));
    add("Repeat", r.repeat);
    add("Attempt", r.attempt);
    add("Turns", r.num_turns);
    add("Duration", fmtMS(r.duration_ms));
    add("Tokens in / out", r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens + " / " + r.usage.output_tokens);
    add("Cost", r.cost_usd === null ? "unpriced" : "$" + r.cost_usd.toFixed(4));
    add("Sandbox", r.sandbox);
    add("Session id", r.session_id);
    add("Folder", d.dir);
    frag.appendChild(facts);
    for (const p of d.problems || []) frag.appendChild(el("p", "problem", p));

    const res = section("Result", true);
    if (r.failure) {
      res.appendChild(el("p", "bad reason", r.failure.summary));
      if (r.failure.detail) res.appendChild(pre(r.failure.detail));
    } else if (d.error) res.appendChild(el("p", "bad reason", d.error.kind + ": " + d.error.message));
    if (d.stop_reason) res.appendChild(el("p", null, "Stop reason: " + d.stop_reason));
    if (d.result) {
      res.appendChild(pre(d.result.text || "(no final answer)"));
      const n = cutNote(d.result, d.dir + "/result.json");
      if (n) res.appendChild(n);
    }
    if (d.structured_output) {
      res.appendChild(el("p", null, "Structured output:"));
      res.appendChild(pre(d.structured_output));
    }
    frag.appendChild(res);

    const checks = d.checks || [];
    if (checks.length) {
      const failed = checks.some((c) => !c.passed);
      const cs = section("Checks", failed, checks.length);
      for (const c of checks) {
        const item = el("div", "check");
        item.dataset.check = c.name;
        item.appendChild(el("p", c.passed ? "ok" : "bad", (c.passed ? "✓ " : "✗ ") + c.name + " · exit " + c.exit_code + " · " + fmtMS(c.duration_ms)));
        item.appendChild(pre(c.output.text));
        const n = cutNote(c.output);
        if (n) item.appendChild(n);
        cs.appendChild(item);
      }
      frag.appendChild(cs);
    }

    if (d.transcript) {
      const ts = section("Transcript", false);
      const n = cutNote(d.transcript, d.dir + "/transcript.txt");
      if (n) ts.appendChild(n);
      ts.appendChild(pre(d.transcript.text));
      frag.appendChild(ts);
    }

    const tools = d.tools || [];
    const omitted = d.tools_omitted || 0;
    const tc = section("Tool calls", false, tools.length + omitted);
    if (omitted) tc.appendChild(el("p", "cut", "Cut: the first " + omitted + " calls are left out; every call is in " + d.dir + "/events.jsonl."));
    if (!tools.length && !omitted) tc.appendChild(el("p", null, "No tool calls."));
    for (const t of tools) {
      const call = el("details", "call");
      const state = !t.output ? " · no result" : t.is_error ? " · error" : "";
      call.appendChild(el("summary", t.is_error ? "bad" : null, t.name + (t.parent ? " (sub-agent)" : "") + state));
      call.appendChild(el("p", null, "Input:"));
      call.appendChild(pre(t.input.text));
      let n = cutNote(t.input);
      if (n) call.appendChild(n);
      if (t.output) {
        call.appendChild(el("p", null, "Output:"));
        call.appendChild(pre(t.output.text));
        n = cutNote(t.output);
        if (n) call.appendChild(n);
      }
      tc.appendChild(call);
    }
    frag.appendChild(tc);

    const ch = section("Changes", false);
    if (d.patch) {
      ch.appendChild(el("p", null, "From changes.patch:"));
      const n = cutNote(d.patch, d.dir + "/changes.patch");
      if (n) ch.appendChild(n);
      ch.appendChild(pre(d.patch.text, true));
    } else {
      const edits = d.edits || [];
      ch.appendChild(el("p", "cut", "From the session's Write and Edit calls (a worktree workspace records every change in changes.patch; changes made through Bash are not listed here)."));
      if (!edits.length) ch.appendChild(el("p", null, "No Write or Edit call changed a file."));
      for (const e of edits) {
        ch.appendChild(el("p", null, e.tool + " " + e.path));
        ch.appendChild(pre(e.text.text, e.tool === "Edit"));
        const n = cutNote(e.text);
        if (n) ch.appendChild(n);
      }
      if (d.edits_omitted) ch.appendChild(el("p", "cut", "Cut: " + d.edits_omitted + " more calls are left out."));
    }
    frag.appendChild(ch);
    return frag;
  }

  // open shows session row r in the panel; the panel's data-state says when it is done.
  async function open(r) {
    if (openRow) openRow.classList.remove("open");
    openRow = r;
    r.classList.add("open");
    title.textContent = r.dataset.key;
    body.replaceChildren(el("p", "cut", "Loading…"));
    panel.dataset.key = r.dataset.key;
    panel.dataset.state = "loading";
    panel.hidden = false;
    if (location.hash !== "#session=" + encodeURIComponent(r.dataset.key)) {
      history.replaceState(null, "", "#session=" + encodeURIComponent(r.dataset.key));
    }
    try {
      const d = await unpack(Number(r.dataset.i));
      if (openRow !== r) return;
      body.replaceChildren(render(d));
      panel.dataset.state = "loaded";
    } catch (e) {
      if (openRow !== r) return;
      body.replaceChildren(el("p", "problem", "The details cannot be shown: " + e.message));
      panel.dataset.state = "error";
    }
  }

  function close() {
    if (openRow) openRow.classList.remove("open");
    openRow = null;
    panel.hidden = true;
    panel.dataset.state = "";
    history.replaceState(null, "", location.pathname + location.search);
  }

  tbody.addEventListener("click", (e) => {
    const r = e.target.closest("tr.row");
    if (r) open(r);
  });
  tbody.addEventListener("keydown", (e) => {
    const r = e.target.closest("tr.row");
    if (r && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      open(r);
    }
  });
  document.getElementById("close").addEventListener("click", close);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !panel.hidden) close();
  });

  // report.html#session=KEY opens that session.
  function fromHash() {
    const m = /^#session=(.+)$/.exec(location.hash);
    if (!m) return;
    const key = decodeURIComponent(m[1]);
    const r = rows.find((x) => x.dataset.key === key);
    if (r && r !== openRow) {
      open(r);
      r.scrollIntoView({ block: "center" });
    }
  }
  window.addEventListener("hashchange", fromHash);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fromHash);
  else fromHash();
})();
