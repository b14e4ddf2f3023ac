// dcgraph explorer: selection (backward slice and users), search, hover. Vanilla JS, no
// network. Reads the JSON in #dc-data: items[id] = {kind, label, hover, fn, where, deps,
// inputs}; tree rows carry data-id, graph nodes are <g class="node" id="n<id>">.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("dc-data").textContent);
  const items = data.items;
  const users = items.map(() => []);
  items.forEach((it) => it.inputs.forEach((src) => users[src].push(it.id)));
  const marks = ["dc-selected", "dc-slice", "dc-user"];
  const status = document.getElementById("dc-status");
  const info = document.getElementById("dc-info");

  function elementsOf(id) {
    const els = Array.from(document.querySelectorAll('[data-id="' + id + '"]'));
    const g = document.getElementById("n" + id);
    if (g) els.push(g);
    return els;
  }

  function idOf(target) {
    const row = target.closest("[data-id]");
    if (row) return Number(row.dataset.id);
    const g = target.closest("g.node");
    return g && /^n\d+$/.test(g.id) ? Number(g.id.slice(1)) : null;
  }

  // What `id` depends on, itself included (Tape.slice, through fold markers).
  function backwardSlice(id) {
    const seen = new Set([id]);
    const stack = [id];
    while (stack.length) {
      for (const d of items[stack.pop()].deps) {
        if (!seen.has(d)) { seen.add(d); stack.push(d); }
      }
    }
    return seen;
  }

  function mark(ids, cls) {
    ids.forEach((x) => elementsOf(x).forEach((el) => el.classList.add(cls)));
  }

  function select(id) {
    document.querySelectorAll("." + marks.join(", .")).forEach((el) => el.classList.remove(...marks));
    const slice = backwardSlice(id);
    mark(slice, "dc-slice");
    mark(users[id], "dc-user");
    mark([id], "dc-selected");
    status.textContent = items[id].label + ": slice of " + slice.size + ", " + users[id].length + " users";
    showInfo(id);
  }

  function showInfo(id) {
    const it = items[id];
    info.textContent = it.label + "  [" + it.kind + "]\n" + it.hover;
  }

  document.addEventListener("click", (ev) => {
    const id = idOf(ev.target);
    if (id === null) return;
    ev.preventDefault();  // a click on a call's row selects it; the marker toggles it
    select(id);
  });
  document.addEventListener("mouseover", (ev) => {
    const id = idOf(ev.target);
    if (id !== null) showInfo(id);
  });

  // Filter the tree by function or variable name: keep matching rows and the calls around them.
  const matches = (fn, names, q) =>
    fn.toLowerCase().includes(q) || names.some((x) => x.toLowerCase().includes(q));
  document.getElementById("dc-search").addEventListener("input", (ev) => {
    const q = ev.target.value.trim().toLowerCase();
    const lis = Array.from(document.querySelectorAll(".dc-tree li")).reverse();  // children first
    const keep = new Set();
    for (const li of lis) {
      const row = li.querySelector("[data-id]");
      const hit = !q || matches(row.dataset.fn, (row.dataset.names || "").split(" "), q);
      const inner = Array.from(li.querySelectorAll(":scope > details > ul > li")).some((c) => keep.has(c));
      if (hit || inner) keep.add(li);
      li.classList.toggle("dc-hidden", !(hit || inner));
      if (q && inner) li.querySelector("details").open = true;
    }
    items.forEach((it) => {
      const g = document.getElementById("n" + it.id);
      if (g) g.classList.toggle("dc-dim", Boolean(q) && !matches(it.fn, it.names || [], q));
    });
    status.textContent = q ? "showing calls of functions and values named like '" + q + "'" : "";
  });

  // Zoom: the graph starts fitted to its pane's width; the buttons scale it.
  const pane = document.getElementById("dc-graph");
  const svg = pane.querySelector("svg");
  function zoom(factor) {
    if (!svg) return;
    const width = factor ? svg.getBoundingClientRect().width * factor : pane.clientWidth - 16;
    svg.style.width = Math.max(width, 50) + "px";
    svg.style.height = "auto";
  }
  document.getElementById("dc-zoom-in").addEventListener("click", () => zoom(1.25));
  document.getElementById("dc-zoom-out").addEventListener("click", () => zoom(0.8));
  document.getElementById("dc-zoom-fit").addEventListener("click", () => zoom(0));
  if (svg && svg.getBoundingClientRect().width > pane.clientWidth) zoom(0);

  // Graphviz writes the node name as each node's tooltip; show the value and source instead.
  items.forEach((it) => {
    const g = document.getElementById("n" + it.id);
    const title = g && g.querySelector("title");
    if (title) title.textContent = it.label + "\n" + it.hover;
  });
})();
