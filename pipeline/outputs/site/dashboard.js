/* Liger dashboard: filters -> Plotly.react over the embedded payload (see payload.py for its shape).
   Every data string reaches the DOM through textContent / new Option(), and Plotly through esc():
   nothing from the data is ever parsed as HTML. */
(function () {
  'use strict';
  var P = JSON.parse(document.getElementById('site-data').textContent);
  var S = P.s;
  P.pts = assemblePoints(P);

  // The points come in blocks of axis points (points.py): map each block's sweeps onto the payload's,
  // its x values onto S.xval, drop the points before the window, and order each sweep's points by x
  // (x_numeric, none last, then the text) and axis point: pts[sweep] = [x, axis, p20, p50, p80, ...].
  function assemblePoints(P) {
    var first = P.axis.first, ids = {}, xcode = {}, xnum = [], rows = [];
    var fields = ['kernel', 'provider', 'mode', 'metric', 'gpu', 'xname', 'config'];
    P.sweeps.forEach(function (r, sid) {
      ids[JSON.stringify(fields.map(function (f, i) { return S[f][r[i]]; }))] = sid;
      rows.push([]);
    });
    S.xval = [];
    P.blocks.forEach(function (b) {
      var xs = b.x.map(function (x) {
        var key = JSON.stringify(x[0]);
        if (!(key in xcode)) { xcode[key] = S.xval.length; S.xval.push(x[0]); xnum.push(x[1]); }
        return xcode[key];
      });
      b.k.forEach(function (k, i) {
        var sid = ids[JSON.stringify(k)];
        if (sid === undefined) return;
        var flat = b.p[i];
        for (var j = 0; j < flat.length; j += 5) {
          if (flat[j + 1] < first) continue;
          rows[sid].push([xs[flat[j]], flat[j + 1] - first, flat[j + 2], flat[j + 3], flat[j + 4]]);
        }
      });
    });
    function xOrder(a, b) {
      var na = xnum[a], nb = xnum[b];
      if ((na === null) !== (nb === null)) return na === null ? 1 : -1;
      if (na !== null && na !== nb) return na - nb;
      var ta = S.xval[a], tb = S.xval[b];
      if (ta === tb) return 0;
      if (ta === null || tb === null) return ta === null ? 1 : -1;
      return ta < tb ? -1 : 1;
    }
    return rows.map(function (r) {
      r.sort(function (a, b) { return xOrder(a[0], b[0]) || a[1] - b[1]; });
      var flat = [];
      r.forEach(function (p) { flat.push(p[0], p[1], p[2], p[3], p[4]); });
      return flat;
    });
  }
  var VERDICT_COLORS = {
    regression: '#d62728', improvement: '#2ca02c', drift: '#ff7f0e', unstable: '#9467bd',
    unchanged: '#7f7f7f', insufficient: '#b0b0b0'
  };
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
    '#bcbd22', '#17becf'];
  var FLAGGED = {};
  P.flagged.forEach(function (v) { FLAGGED[v] = true; });

  // Plotly renders a subset of HTML in names, ticks and hover text and treats $...$ as TeX (plotly_text.js)
  var esc = plotlyText;
  function str(field, idx) { var v = S[field][idx]; return v === null || v === undefined ? '(none)' : v; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function fmtRatio(r) { return r === null || r === undefined ? '' : '\u00d7' + Number(r).toFixed(3); }
  function fmtPct(r, sign) {
    return r === null || r === undefined ? '' : (sign || '') + (100 * r).toFixed(1) + '%';
  }
  function badge(verdict) {
    var b = el('span', verdict, 'badge');
    b.style.background = VERDICT_COLORS[verdict] || '#444';
    return b;
  }

  // ---- sweeps, references, comparisons ---------------------------------------------------------
  var sweeps = P.sweeps.map(function (r, i) {
    return { id: i, kernel: r[0], provider: r[1], mode: r[2], metric: r[3], gpu: r[4], xname: r[5],
      config: r[6], unit: r[7], liger: r[8] === 1, variant: r[5] + ',' + r[6] };
  });
  function refKey(s) { return [s.kernel, s.mode, s.metric, s.gpu, s.xname, s.config].join('|'); }
  var refsByKey = {};
  sweeps.forEach(function (s) {
    if (!s.liger) (refsByKey[refKey(s)] = refsByKey[refKey(s)] || []).push(s);
  });
  var cmpBySweep = {};
  P.cmp.forEach(function (c) {
    (cmpBySweep[c[0]] = cmpBySweep[c[0]] || []).push({
      from: c[1], to: c[2], verdict: str('verdict', c[3]), ratio: c[4], refRatio: c[5], normRatio: c[6],
      threshold: c[7], bands: c[8], points: c[9], fromRuns: c[10], toRuns: c[11],
      refs: S.refs[c[12]], reason: S.reason[c[13]]
    });
  });
  Object.keys(cmpBySweep).forEach(function (k) {
    cmpBySweep[k].sort(function (a, b) { return b.to - a.to; });
  });
  var ligerSweeps = sweeps.filter(function (s) { return s.liger; });

  // ---- dependent selects -----------------------------------------------------------------------
  var FILTERS = [
    { key: 'kernel', id: 'f-kernel', label: function (v) { return str('kernel', v); } },
    { key: 'mode', id: 'f-mode', label: function (v) { return str('mode', v); } },
    { key: 'metric', id: 'f-metric', label: function (v) { return str('metric', v); } },
    { key: 'gpu', id: 'f-gpu', label: function (v) { return str('gpu', v); } },
    { key: 'provider', id: 'f-provider', label: function (v) { return str('provider', v); } },
    { key: 'variant', id: 'f-variant', label: function (v) {
      var p = v.split(','); var cfg = str('config', +p[1]);
      return str('xname', +p[0]) + ' \u00b7 ' + (cfg.length > 70 ? cfg.slice(0, 67) + '...' : cfg);
    } }
  ];
  var state = {};

  function refill(fromIndex) {
    var pool = ligerSweeps;
    FILTERS.forEach(function (f, i) {
      var values = [];
      var seen = {};
      pool.forEach(function (s) { if (!seen[s[f.key]]) { seen[s[f.key]] = true; values.push(s[f.key]); } });
      values.sort(function (a, b) { return f.label(a).localeCompare(f.label(b)); });
      var select = document.getElementById(f.id);
      if (i >= fromIndex || !seen[state[f.key]]) {
        var keep = seen[state[f.key]] ? state[f.key] : values[0];
        select.textContent = '';
        values.forEach(function (v) {
          var o = new Option(f.label(v), String(v));
          if (f.key === 'variant') o.title = str('config', +String(v).split(',')[1]);
          select.add(o);
        });
        state[f.key] = keep;
        select.value = String(keep);
        select.disabled = values.length < 2;
      }
      pool = pool.filter(function (s) { return s[f.key] === state[f.key]; });
    });
    return pool[0];
  }

  function currentSweep() {
    return ligerSweeps.filter(function (s) {
      return FILTERS.every(function (f) { return s[f.key] === state[f.key]; });
    })[0];
  }

  function fillReferences(sweep) {
    // the user's reference provider when this sweep has it; else the one its newest verdict used
    var select = document.getElementById('f-ref');
    var refs = refsByKey[refKey(sweep)] || [];
    function name(r) { return str('provider', r.provider); }
    var chosen = null;
    if (state.ref !== '(none)') {
      chosen = refs.filter(function (r) { return name(r) === state.ref; })[0];
      if (!chosen) {
        var cmps = cmpBySweep[sweep.id] || [];
        var named = cmps.length && cmps[0].refs ? cmps[0].refs.split(',') : [];
        chosen = refs.filter(function (r) { return named.indexOf(name(r)) >= 0; })[0] || refs[0] || null;
      }
    }
    select.textContent = '';
    refs.forEach(function (r) { select.add(new Option(name(r), String(r.id))); });
    select.add(new Option('(no reference)', ''));
    select.value = chosen ? String(chosen.id) : '';
  }

  // ---- the plot --------------------------------------------------------------------------------
  function series(sweep) {
    // {xval index -> {ax: [], p20: [], p50: [], p80: []}} in the payload's x order
    var flat = P.pts[sweep.id] || [];
    var order = [];
    var by = {};
    for (var i = 0; i < flat.length; i += 5) {
      var xv = flat[i];
      if (!by[xv]) { by[xv] = []; order.push(xv); }
      by[xv].push([flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]]);
    }
    order.forEach(function (xv) { by[xv].sort(function (a, b) { return a[0] - b[0]; }); });
    return { order: order, by: by };
  }

  function rgba(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }

  function draw() {
    var sweep = currentSweep();
    var plotDiv = document.getElementById('plot');
    if (!sweep) { Plotly.react(plotDiv, [], { title: { text: 'no liger-family sweep' } }); return; }
    fillReferences(sweep);
    var refId = document.getElementById('f-ref').value;
    var ref = refId === '' ? null : sweeps[+refId];
    var own = series(sweep);
    var other = ref ? series(ref) : { order: [], by: {} };
    // compress the axis to the points this sweep (or its reference) was measured at
    var used = {};
    [own, other].forEach(function (s) {
      s.order.forEach(function (xv) { s.by[xv].forEach(function (p) { used[p[0]] = true; }); });
    });
    var axes = Object.keys(used).map(Number).sort(function (a, b) { return a - b; });
    var pos = {};
    axes.forEach(function (a, i) { pos[a] = i; });
    var xname = str('xname', sweep.xname);
    var traces = [];
    own.order.forEach(function (xv, i) {
      var color = PALETTE[i % PALETTE.length];
      var rows = own.by[xv];
      var xs = rows.map(function (p) { return pos[p[0]]; });
      var group = 'x' + xv;
      var label = esc(xname + '=' + str('xval', xv));
      traces.push({ x: xs, y: rows.map(function (p) { return p[3]; }), mode: 'lines', line: { width: 0 },
        hoverinfo: 'skip', showlegend: false, legendgroup: group, meta: sweep.id, type: 'scatter' });
      traces.push({ x: xs, y: rows.map(function (p) { return p[1]; }), mode: 'lines', line: { width: 0 },
        fill: 'tonexty', fillcolor: rgba(color, 0.15), hoverinfo: 'skip', showlegend: false,
        legendgroup: group, meta: sweep.id, type: 'scatter' });
      traces.push({ x: xs, y: rows.map(function (p) { return p[2]; }), mode: 'lines+markers', name: label,
        line: { color: color, width: 2 }, marker: { size: 6 }, legendgroup: group, meta: sweep.id,
        type: 'scatter',
        customdata: rows.map(function (p) { return [p[1], p[3], esc(P.axis.label[p[0]])]; }),
        hovertemplate: '%{customdata[2]}<br>p50 %{y:.4g}<br>p20\u2013p80 %{customdata[0]:.4g} \u2013 ' +
          '%{customdata[1]:.4g}<extra>' + label + '</extra>' });
    });
    var refName = ref ? str('provider', ref.provider) : '';
    other.order.forEach(function (xv) {
      var idx = own.order.indexOf(xv);
      var color = idx >= 0 ? PALETTE[idx % PALETTE.length] : '#555';
      var rows = other.by[xv];
      var label = esc(refName + ' ' + xname + '=' + str('xval', xv));
      traces.push({ x: rows.map(function (p) { return pos[p[0]]; }), y: rows.map(function (p) { return p[2]; }),
        mode: 'lines+markers', name: label, legendgroup: 'x' + xv, meta: ref.id, type: 'scatter',
        line: { color: color, width: 1.5, dash: 'dash' }, marker: { size: 4, symbol: 'circle-open' },
        customdata: rows.map(function (p) { return [p[1], p[3], esc(P.axis.label[p[0]])]; }),
        hovertemplate: '%{customdata[2]}<br>p50 %{y:.4g}<extra>' + label + '</extra>' });
    });
    // shade the judged pairs whose verdict is flagged
    var shapes = [];
    var annotations = [];
    (cmpBySweep[sweep.id] || []).forEach(function (c) {
      if (!FLAGGED[c.verdict]) return;
      var from = -1, to = -1;
      axes.forEach(function (a, i) {
        if (P.axis.ver[a] === c.from) from = i;
        if (P.axis.ver[a] === c.to && to < 0) to = i;
      });
      if (from < 0 || to < 0) return;
      shapes.push({ type: 'rect', xref: 'x', yref: 'paper', x0: from, x1: to, y0: 0, y1: 1, layer: 'below',
        line: { width: 0 }, fillcolor: VERDICT_COLORS[c.verdict] || '#444', opacity: 0.12 });
      annotations.push({ x: (from + to) / 2, y: 1, xref: 'x', yref: 'paper', yanchor: 'bottom',
        showarrow: false, text: esc(c.verdict + ' ' + fmtRatio(c.ratio)),
        font: { color: VERDICT_COLORS[c.verdict] || '#444', size: 12 } });
    });
    var unit = str('unit', sweep.unit);
    var layout = {
      height: 520, margin: { l: 70, r: 20, t: 40, b: 90 }, hovermode: 'closest',
      xaxis: { title: { text: P.axis.mode === 'commit' ? 'commit (release)' : 'Liger version' },
        tickmode: 'array', tickvals: axes.map(function (a, i) { return i; }),
        ticktext: axes.map(function (a) { return esc(P.axis.label[a]); }), range: [-0.5, axes.length - 0.5] },
      yaxis: { title: { text: esc(str('metric', sweep.metric) + ' p50 (' + unit + ')') },
        type: document.getElementById('f-log').checked ? 'log' : 'linear' },
      legend: { font: { size: 11 } }, shapes: shapes, annotations: annotations
    };
    Plotly.react(plotDiv, traces, layout, { responsive: true, displaylogo: false });
    document.getElementById('sweep-title').textContent = [str('kernel', sweep.kernel), str('provider', sweep.provider),
      str('mode', sweep.mode), str('metric', sweep.metric), str('gpu', sweep.gpu)].join(' \u00b7 ') +
      (ref ? '  (dashed: ' + refName + ')' : '');
    document.getElementById('sweep-config').textContent = 'x = ' + xname + ', config ' + str('config', sweep.config);
    evidence(sweep);
    suspects(sweep);
    try { history.replaceState(null, '', '#s=' + sweep.id); } catch (e) { /* file:// may refuse */ }
  }

  function table(head, rows) {
    var t = el('table');
    var tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', h)); });
    t.appendChild(el('thead')).appendChild(tr);
    var body = el('tbody');
    rows.forEach(function (cells) {
      var r = el('tr');
      cells.forEach(function (c) {
        var td = el('td');
        if (c instanceof Node) td.appendChild(c); else td.textContent = c === null || c === undefined ? '' : String(c);
        r.appendChild(td);
      });
      body.appendChild(r);
    });
    t.appendChild(body);
    return t;
  }

  function evidence(sweep) {
    var box = document.getElementById('evidence');
    box.textContent = '';
    var cmps = cmpBySweep[sweep.id] || [];
    if (!cmps.length) { box.appendChild(el('p', 'No version pair of this sweep was judged.', 'muted')); return; }
    box.appendChild(table(
      ['versions', 'verdict', 'ratio', 'reference', 'normalized', 'threshold', 'bands', 'points', 'runs', 'reason'],
      cmps.map(function (c) {
        return [(P.versions[c.from] || '?') + ' \u2192 ' + P.versions[c.to], badge(c.verdict), fmtRatio(c.ratio),
          c.refs ? c.refs + ' ' + fmtRatio(c.refRatio) : '', fmtRatio(c.normRatio), fmtPct(c.threshold, '\u00b1'),
          fmtPct(c.bands), c.points, c.fromRuns + ' / ' + c.toRuns, c.reason];
      })));
  }

  function suspects(sweep) {
    var box = document.getElementById('suspects');
    if (!P.suspects) { box.hidden = true; return; }
    box.hidden = false;
    var list = box.querySelector('.list');
    list.textContent = '';
    var idx = P.suspects.by_sweep[String(sweep.id)] || [];
    if (!idx.length) { list.appendChild(el('p', 'No suspect commits for this sweep.', 'muted')); return; }
    var nk = P.suspects.keys.length;
    list.appendChild(table(P.suspects.cols, idx.map(function (i) { return P.suspects.rows[i].slice(nk); })));
  }

  function select(sweep) {
    FILTERS.forEach(function (f) { state[f.key] = sweep[f.key]; });
    refill(0);
    draw();
  }

  // ---- per-GPU overview ------------------------------------------------------------------------
  function overview() {
    var gpu = +document.getElementById('ov-gpu').value;
    var flaggedOnly = document.getElementById('ov-flagged').checked;
    var rows = ligerSweeps.filter(function (s) { return s.gpu === gpu; }).map(function (s) {
      var flat = P.pts[s.id] || [];
      var vers = {};
      for (var i = 1; i < flat.length; i += 5) vers[P.axis.ver[flat[i]]] = true;
      var vs = Object.keys(vers).map(Number).sort(function (a, b) { return a - b; });
      var latest = (cmpBySweep[s.id] || [])[0];
      return { s: s, vs: vs, latest: latest };
    }).filter(function (r) { return !flaggedOnly || (r.latest && FLAGGED[r.latest.verdict]); });
    rows.sort(function (a, b) {
      return str('kernel', a.s.kernel).localeCompare(str('kernel', b.s.kernel)) ||
        str('mode', a.s.mode).localeCompare(str('mode', b.s.mode)) ||
        str('metric', a.s.metric).localeCompare(str('metric', b.s.metric)) ||
        str('provider', a.s.provider).localeCompare(str('provider', b.s.provider)) || a.s.id - b.s.id;
    });
    var t = table(['kernel', 'pass', 'metric', 'provider', 'x \u00b7 config', 'versions', 'latest change',
      'ratio', 'verdict', 'runs (newest)'],
    rows.map(function (r) {
      var s = r.s;
      var cfg = str('config', s.config);
      return [str('kernel', s.kernel), str('mode', s.mode), str('metric', s.metric), str('provider', s.provider),
        str('xname', s.xname) + ' \u00b7 ' + (cfg.length > 40 ? cfg.slice(0, 37) + '...' : cfg),
        r.vs.length ? P.versions[r.vs[0]] + ' \u2192 ' + P.versions[r.vs[r.vs.length - 1]] + ' (' + r.vs.length + ')' : '',
        r.latest ? (P.versions[r.latest.from] || '?') + ' \u2192 ' + P.versions[r.latest.to] : 'never compared',
        r.latest ? fmtRatio(r.latest.ratio) : '', r.latest ? badge(r.latest.verdict) : '', P.runs[s.id]];
    }));
    t.id = 'overview-table';
    Array.prototype.forEach.call(t.tBodies[0].rows, function (tr, i) {
      tr.dataset.sweep = String(rows[i].s.id);
      tr.className = 'clickable';
      tr.addEventListener('click', function () {
        select(rows[i].s);
        document.getElementById('explorer').scrollIntoView();
      });
    });
    var box = document.getElementById('overview');
    box.textContent = '';
    box.appendChild(el('p', rows.length + ' liger-family sweeps on ' + str('gpu', gpu) +
      '. Click a row to plot it.', 'muted'));
    box.appendChild(t);
  }

  // ---- wiring ----------------------------------------------------------------------------------
  FILTERS.forEach(function (f, i) {
    document.getElementById(f.id).addEventListener('change', function (ev) {
      var raw = ev.target.value;
      state[f.key] = f.key === 'variant' ? raw : +raw;
      refill(i + 1);
      draw();
    });
  });
  document.getElementById('f-ref').addEventListener('change', function (ev) {
    var r = ev.target.value === '' ? null : sweeps[+ev.target.value];
    state.ref = r ? str('provider', r.provider) : '(none)';
    draw();
  });
  document.getElementById('f-log').addEventListener('change', draw);

  var ovGpu = document.getElementById('ov-gpu');
  var gpus = {};
  ligerSweeps.forEach(function (s) { gpus[s.gpu] = true; });
  Object.keys(gpus).map(Number).sort(function (a, b) { return str('gpu', a).localeCompare(str('gpu', b)); })
    .forEach(function (g) { ovGpu.add(new Option(str('gpu', g), String(g))); });
  ovGpu.addEventListener('change', overview);
  document.getElementById('ov-flagged').addEventListener('change', overview);

  var start = null;
  var m = /^#s=(\d+)$/.exec(location.hash);
  if (m && sweeps[+m[1]] && sweeps[+m[1]].liger) start = sweeps[+m[1]];
  if (!start) {
    // open on the newest flagged comparison, else the first sweep
    var first = P.cmp.filter(function (c) { return FLAGGED[str('verdict', c[3])]; })[0];
    start = first ? sweeps[first[0]] : ligerSweeps[0];
  }
  if (start) {
    ovGpu.value = String(start.gpu);
    select(start);
  }
  overview();
  document.body.dataset.ready = '1';
})();
