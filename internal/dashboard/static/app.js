// relay dashboard: follows the hub's websocket feed (docs/protocol.md) and
// renders it. Every text from the feed is set with textContent, never as
// HTML: messages are untrusted.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const SHOWN = 400; // characters of a body shown before "show all"
  const MAX_MESSAGES = 1000;
  const params = new URLSearchParams(location.search);
  let workspace = params.get("workspace") || "";
  let epoch = "", lastSeq = 0, ws = null, backoff = 500;
  let agents = new Map(), messages = new Map(), selected = null; // {kind:"agent"|"message", id}
  let screens = new Map(), human = "human";

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  // A time relay does not know comes as Go's zero time (year 1).
  function known(t) {
    const d = new Date(t);
    return !isNaN(d) && d.getUTCFullYear() > 1;
  }
  function clock(t) {
    const d = new Date(t);
    if (isNaN(d)) return "";
    if (!known(t)) return "an unknown time";
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }
  function ago(t) {
    if (!known(t)) return "an unknown time";
    const s = Math.max(0, (Date.now() - new Date(t)) / 1000);
    if (s < 60) return Math.round(s) + "s";
    if (s < 3600) return Math.round(s / 60) + "m";
    return Math.round(s / 3600) + "h";
  }
  function bytes(n) {
    if (n < 1024) return n + " B";
    if (n < 1 << 20) return (n / 1024).toFixed(1) + " KB";
    return (n / (1 << 20)).toFixed(1) + " MB";
  }

  // ---- connection -------------------------------------------------------
  function connect() {
    const q = new URLSearchParams();
    if (workspace) q.set("workspace", workspace);
    if (lastSeq > 0 && epoch) { q.set("since", String(lastSeq)); q.set("epoch", epoch); }
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + "/ws?" + q.toString());
    ws.onopen = () => { backoff = 500; setConn(true); };
    ws.onmessage = (ev) => { let f; try { f = JSON.parse(ev.data); } catch (e) { return; } onFrame(f); };
    ws.onclose = () => {
      setConn(false);
      ws = null;
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 5000);
    };
  }
  function setConn(on) {
    const c = $("conn");
    c.className = "conn " + (on ? "on" : "off");
    c.textContent = on ? "live" : "reconnecting…";
  }
  function request(obj) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(obj));
    return true;
  }

  function onFrame(f) {
    if (f.seq && f.type !== "hello") lastSeq = f.seq;
    switch (f.type) {
      case "hello": onHello(f); break;
      case "agent": onAgent(f.agent); break;
      case "message": onMessage(f.message, f.full); break;
      case "receipt": onReceipt(f); break;
      case "memory": onMemory(f); break;
      case "screen": onScreen(f.screen); break;
      case "sent": sendStatus("sent" + (f.to ? " to " + f.to : "") + (f.warning ? " (" + f.warning + ")" : ""), !!f.warning); break;
      case "memory_results": onMemoryResults(f); break;
      case "stopping": sendStatus("ending " + f.to + " (SessionEnd hooks, its last turn, then exit)", false); break;
      case "answered": sendStatus("answered " + f.to + "'s prompt", false); break;
      case "error":
        if (f.request === "send" || f.request === "stop" || f.request === "approve") sendStatus(f.error, true);
        else if (f.request === "memory_search") onMemoryResults({ error: f.error });
        else console.warn("relay dashboard:", f.error);
        break;
    }
  }

  function onHello(f) {
    epoch = f.epoch; lastSeq = f.seq || 0; human = f.human || human;
    workspace = f.workspace;
    const sel = $("workspace");
    const names = new Set(f.workspaces || []);
    names.add(f.workspace);
    sel.replaceChildren();
    [...names].sort().forEach((n) => { const o = el("option", null, n); o.value = n; sel.appendChild(o); });
    sel.value = f.workspace;
    if (f.snapshot) {
      agents.clear(); messages.clear();
      $("agents").replaceChildren(); $("messages").replaceChildren(); $("memory-changes").replaceChildren();
      const to = $("send-to");
      while (to.children.length > 1) to.lastChild.remove();
      renderAgentCount(); renderMessageCount();
    }
    if (selected && selected.kind === "agent") request({ type: "select", agent: selected.id });
  }

  // ---- agents -----------------------------------------------------------
  function onAgent(a) {
    if (!a) return;
    let row = agents.get(a.name);
    const isNew = !row;
    if (isNew) {
      row = { li: el("li") };
      row.li.dataset.name = a.name;
      row.li.addEventListener("click", () => select("agent", a.name));
      focusable(row.li, () => select("agent", a.name));
      insertSorted($("agents"), row.li, a.name);
      agents.set(a.name, row);
      const o = el("option", null, a.name); o.value = a.name;
      insertSorted($("send-to"), o, a.name, 1);
    }
    row.a = a;
    const li = row.li;
    li.replaceChildren();
    const top = el("div", "agent-top");
    top.appendChild(el("span", "agent-name", a.name));
    // A stuck agent: its oldest message has waited too long to be typed.
    top.appendChild(el("span", "state " + a.state, a.state === "stuck" ? "stuck " + ago(a.waiting_since) : a.state));
    li.appendChild(top);
    const meta = el("div", "agent-meta");
    meta.appendChild(el("span", "cli", a.cli || "unknown CLI"));
    meta.appendChild(el("span", "pending" + (a.pending ? " some" : ""), (a.pending || 0) + " pending"));
    if (a.skipped) meta.appendChild(el("span", "skipped some", bytes(a.skipped) + " skipped"));
    li.appendChild(meta);
    li.classList.toggle("selected", !!selected && selected.kind === "agent" && selected.id === a.name);
    li.title = a.name + ": " + a.state + " since " + clock(a.since) + (a.host ? " on " + a.host : "");
    renderAgentCount();
    if (selected && selected.kind === "agent" && selected.id === a.name) renderDetails();
  }
  // focusable lets the keyboard reach a clickable row: Tab, then Enter.
  function focusable(li, fn) {
    li.tabIndex = 0;
    li.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && ev.target === li) fn(); });
  }
  function insertSorted(list, node, key, skip) {
    const kids = [...list.children].slice(skip || 0);
    const after = kids.find((k) => (k.dataset.name || k.value) > key);
    node.dataset.name = key;
    list.insertBefore(node, after || null);
  }
  function renderAgentCount() {
    $("agent-count").textContent = agents.size ? "(" + agents.size + ")" : "";
    $("no-agents").hidden = agents.size > 0;
  }

  // ---- messages ---------------------------------------------------------
  function onMessage(m, full) {
    if (!m) return;
    let row = messages.get(m.id);
    if (full) {
      if (row) { row.m.body = m.body; row.m.truncated = false; row.expanded = true; renderMessage(row); }
      if (selected && selected.kind === "message" && selected.id === m.id) renderDetails();
      return;
    }
    if (!row) {
      row = { li: el("li"), expanded: false };
      row.li.addEventListener("click", (ev) => { if (ev.target.tagName !== "BUTTON") select("message", m.id); });
      focusable(row.li, () => select("message", m.id));
      const list = $("messages");
      const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      list.appendChild(row.li);
      messages.set(m.id, row);
      while (messages.size > MAX_MESSAGES) {
        const [id, old] = messages.entries().next().value;
        old.li.remove(); messages.delete(id);
      }
      if (atBottom) list.scrollTop = list.scrollHeight;
    }
    row.m = m;
    renderMessage(row);
    renderMessageCount();
  }
  function renderMessageCount() { $("message-count").textContent = messages.size ? "(" + messages.size + ")" : ""; }

  function renderMessage(row) {
    const m = row.m, li = row.li;
    li.replaceChildren();
    li.className = (m.kind === "notice" ? "notice" : "") + (selected && selected.kind === "message" && selected.id === m.id ? " selected" : "");
    const head = el("div", "msg-head");
    head.appendChild(el("span", "route", m.from + " → " + (m.to === "*" ? "all" : m.to)));
    if (m.hops) head.appendChild(el("span", "hops", "hop " + m.hops));
    head.appendChild(el("span", "time", clock(m.created)));
    li.appendChild(head);
    const long = m.truncated || m.body.length > SHOWN;
    const text = m.invalid ? "(rejected: " + m.invalid + ") " + m.body : m.body;
    li.appendChild(el("div", "body", row.expanded || !long ? text : text.slice(0, SHOWN) + "…"));
    if (long && !row.expanded) {
      const more = el("button", "more", "show all (" + bytes(m.size || m.body.length) + ")");
      more.type = "button";
      more.addEventListener("click", () => {
        if (m.truncated) request({ type: "message", id: m.id });
        else { row.expanded = true; renderMessage(row); }
      });
      li.appendChild(more);
    }
    li.appendChild(badges(m));
  }
  function badges(m) {
    const box = el("div", "badges");
    const names = Object.keys(m.status || {}).sort();
    for (const n of names) {
      const st = m.status[n];
      const b = el("span", "badge " + st, (m.to === "*" || names.length > 1 ? n + ": " : "") + st);
      const hist = stagesOf(m, n).map((x) => x.stage + " " + clock(x.at)).join(" · ");
      b.title = (m.reasons && m.reasons[n] ? m.reasons[n] + "\n" : "") + hist;
      box.appendChild(b);
    }
    return box;
  }
  // stagesOf is every stage of message m at recipient n, in order.
  function stagesOf(m, n) {
    return (m.stages || []).filter((x) => x.agent === n);
  }
  function onReceipt(f) {
    const row = messages.get(f.id);
    if (!row) return;
    if (f.at) {
      row.m.stages = row.m.stages || [];
      row.m.stages.push({ agent: f.name, stage: f.status, at: f.at, reason: f.reason });
    }
    row.m.status = row.m.status || {};
    row.m.status[f.name] = f.status;
    row.m.reasons = row.m.reasons || {};
    if (f.reason) row.m.reasons[f.name] = f.reason; else delete row.m.reasons[f.name];
    renderMessage(row);
    if (selected && selected.kind === "message" && selected.id === f.id) renderDetails();
  }

  // ---- details ----------------------------------------------------------
  function select(kind, id) {
    selected = { kind, id };
    for (const [n, r] of agents) r.li.classList.toggle("selected", kind === "agent" && n === id);
    for (const [i, r] of messages) r.li.classList.toggle("selected", kind === "message" && i === id);
    request({ type: "select", agent: kind === "agent" ? id : "" });
    if (kind === "agent") $("send-to").value = id;
    const row = kind === "message" && messages.get(id);
    if (row && row.m.truncated) request({ type: "message", id });
    renderDetails();
  }
  function kv(pairs) {
    const dl = el("dl", "kv");
    for (const [k, v] of pairs) { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v)); }
    return dl;
  }
  function renderDetails() {
    const box = $("details");
    box.replaceChildren();
    if (!selected) return;
    if (selected.kind === "agent") {
      const row = agents.get(selected.id);
      $("details-title").textContent = "Agent " + selected.id;
      if (row) {
        const a = row.a;
        box.appendChild(kv([["state", a.state === "stuck"
          ? "stuck: the oldest message waited " + ago(a.waiting_since) + " (" + (a.stuck_reason || "?") + ")"
          : a.state + " for " + ago(a.since)], ["CLI", a.cli || "unknown"],
          ["pending", String(a.pending || 0)], ["skipped", bytes(a.skipped || 0)],
          ["host", (a.host || "?") + (a.pid ? " (pid " + a.pid + ")" : "")]]
          // seen moves with every heartbeat, which the feed does not send: it means something once offline.
          .concat(a.state === "offline" ? [["last seen", known(a.seen) ? ago(a.seen) + " ago" : "unknown"]] : [])));
        if (a.state === "blocked" && a.ask) {
          const ask = a.ask;
          const p = el("div", "ask", "Waits on its human: " + (ask.tool || "?") + (ask.detail ? ": " + ask.detail : "") +
            " (since " + ago(ask.since) + ")");
          p.id = "ask";
          box.appendChild(p);
          for (const [label, deny] of [["Allow", false], ["Deny", true]]) {
            const b = el("button", deny ? "deny" : "allow", label);
            b.id = deny ? "ask-deny" : "ask-allow";
            b.title = (deny ? "Refuse " : "Allow ") + "this tool call (relay approve" + (deny ? " --deny" : "") + ")";
            b.addEventListener("click", () => {
              const reason = deny ? prompt("Why? (the agent's model reads it)", "") : "";
              if (reason === null) return;
              request({ type: "approve", agent: a.name, id: ask.id, deny, reason: reason || "" });
            });
            box.appendChild(b);
          }
        }
        if (a.state !== "offline") {
          const stop = el("button", "stop", "Stop");
          stop.id = "stop-agent";
          stop.title = "End " + a.name + " gracefully: its SessionEnd hooks, its last turn, then exit (relay stop)";
          stop.addEventListener("click", () => {
            if (confirm("End " + a.name + "? Its SessionEnd hooks run and it exits.")) request({ type: "stop", agent: a.name });
          });
          box.appendChild(stop);
        }
      }
      const s = screens.get(selected.id);
      const pre = el("pre", "screen", s ? s.text : "(no screen yet: the agent's wrapper publishes it while it runs)");
      pre.id = "screen";
      if (s) pre.title = s.cols + "×" + s.rows + " at " + clock(s.at);
      box.appendChild(pre);
      return;
    }
    const row = messages.get(selected.id);
    $("details-title").textContent = "Message";
    if (!row) return;
    const m = row.m;
    box.appendChild(kv([["id", m.id], ["from", m.from], ["to", m.to === "*" ? "all (*)" : m.to], ["time", new Date(m.created).toLocaleString()],
      ["size", bytes(m.size || m.body.length)]].concat(m.thread ? [["thread", m.thread]] : []).concat(m.reply_to ? [["reply to", m.reply_to]] : [])));
    const body = el("div", "body", m.body + (m.truncated ? "\n… (loading the rest)" : ""));
    body.id = "message-body";
    box.appendChild(body);
    const st = el("dl", "kv");
    for (const n of Object.keys(m.status || {}).sort()) {
      st.appendChild(el("dt", null, n));
      st.appendChild(el("dd", null, m.status[n] + (m.reasons && m.reasons[n] ? ": " + m.reasons[n] : "")));
      for (const x of stagesOf(m, n)) {
        const d = el("dd", "stage " + x.stage, clock(x.at) + "  " + x.stage + (x.reason ? " (" + x.reason + ")" : ""));
        st.appendChild(d);
      }
    }
    box.appendChild(el("h3", null, "Delivery"));
    box.appendChild(st);
  }
  function onScreen(s) {
    if (!s) return;
    screens.set(s.agent, s);
    if (selected && selected.kind === "agent" && selected.id === s.agent) {
      const pre = $("screen");
      if (pre) { pre.textContent = s.text; pre.title = s.cols + "×" + s.rows + " at " + clock(s.at); }
      else renderDetails();
    }
  }

  // ---- memory -----------------------------------------------------------
  function memoryItem(m, prefix, cls) {
    const li = el("li");
    if (prefix) li.appendChild(el("span", "op " + (cls || ""), prefix));
    if (m.id) li.appendChild(el("span", "mid", m.id));
    li.appendChild(el("span", null, m.text || ""));
    if (m.author) li.appendChild(el("span", "mid", " — " + m.author));
    return li;
  }
  function onMemory(f) {
    if (!f.memory) return;
    const list = $("memory-changes");
    list.insertBefore(memoryItem(f.memory, f.op === "forget" ? "forgot" : "saved", f.op), list.firstChild);
    while (list.children.length > 50) list.lastChild.remove();
  }
  function onMemoryResults(f) {
    const list = $("memory-results");
    list.replaceChildren();
    if (f.error) { list.appendChild(el("li", null, "search failed: " + f.error)); return; }
    const rs = f.results || [];
    if (!rs.length) { list.appendChild(el("li", null, "no memory matches " + JSON.stringify(f.query))); return; }
    for (const r of rs) list.appendChild(memoryItem(r));
  }

  // ---- forms ------------------------------------------------------------
  function sendStatus(text, bad) {
    const s = $("send-status");
    s.textContent = text;
    s.className = "status" + (bad ? " error" : "");
  }
  function send(ev) {
    ev.preventDefault();
    const body = $("send-body").value;
    if (!body.trim()) { sendStatus("nothing to send", true); return; }
    const to = $("send-to").value;
    if (request({ type: "send", to, body })) { $("send-body").value = ""; sendStatus("sending as " + human + "…"); }
    else sendStatus("not connected; try again in a moment", true);
  }
  $("send").addEventListener("submit", send);
  $("send-body").addEventListener("keydown", (ev) => { if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) send(ev); });
  $("memory-search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    request({ type: "memory_search", query: $("memory-query").value });
  });
  $("workspace").addEventListener("change", (ev) => {
    workspace = ev.target.value; lastSeq = 0; epoch = ""; selected = null;
    screens.clear(); renderDetails();
    history.replaceState(null, "", "/?workspace=" + encodeURIComponent(workspace));
    if (ws) ws.close(); // onclose reconnects to the new workspace
  });
  // Keep "busy for 2m" and "last seen" current for the selected agent.
  setInterval(() => { if (selected && selected.kind === "agent") renderDetails(); }, 5000);
  connect();
})();
