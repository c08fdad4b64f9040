/* The plan calculator of the synthesis chapter (book/_ext/calculator.py): the algorithm the
   book's results favour at a reader's public (N, d, k, ε, δ) and neighbour relation, its
   predicted relative objective with an interval, the alternatives and the evaluated regimes
   it rests on, and whether the request lies outside what the book measured. It reads the
   model the build exports (window.dpkmeansPlanModel, set by plan_calculator_model.js) and
   evaluates it as the module docstring of dpkmeans.synthesis.recommend does, line for line
   (tests/synthesis/test_recommend.py holds that evaluation to recommend's numbers, and
   tests/browser/test_calculator.py this page to recommend's answers). No network, no kernel,
   no library. */
(() => {
  "use strict";

  /** A request the calculator refuses, with what to fix. */
  class RequestError extends Error {}

  // --- numbers as the book writes them (dpkmeans.study.reading.number) ----------------------

  const MINUS = "\u2212";
  const SUPERSCRIPT = {"-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3",
                       4: "\u2074", 5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078",
                       9: "\u2079"};

  function grouped(n) {
    const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (n < 0 ? MINUS : "") + digits;
  }

  function trimmed(text) {
    return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }

  /** x with 3 significant digits: whole numbers exact with thousands separators, others from
      0.001 to a million written out, smaller and larger ones as a power of ten. */
  function number(x) {
    if (Number.isNaN(x)) return "\u2013";
    if (!Number.isFinite(x)) return x > 0 ? "\u221e" : MINUS + "\u221e";
    if (x === 0) return "0";
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return grouped(x);
    const rounded = Number(x.toPrecision(3));
    const size = Math.abs(rounded);
    if (size >= 1e-3 && size < 1e6) {
      if (Number.isInteger(rounded)) return grouped(rounded);
      return trimmed(rounded.toPrecision(3)).replace("-", MINUS);
    }
    const [mantissa, exponent] = rounded.toExponential(2).split("e");
    const digits = trimmed(mantissa.replace("-", ""));
    const power = "10" + Array.from(String(Number(exponent)), c => SUPERSCRIPT[c]).join("");
    const sign = rounded < 0 ? MINUS : "";
    return digits === "1" ? sign + power : `${sign}${digits} \u00d7 ${power}`;
  }

  function percent(level) {
    return `${Number((100 * level).toPrecision(6))}%`;
  }

  // --- the model's evaluation (dpkmeans.synthesis.recommend, "The JSON") --------------------

  const COORDINATES = ["N\u00b7\u03b5/k", "d", "k"];

  /** The class of the relation with the largest measured delta not above the request's. */
  function privacyClass(model, delta, relation) {
    const fits = model.classes.filter(c => c.neighbour === relation && c.delta <= delta);
    if (!fits.length) {
      throw new RequestError(`The book measured no algorithm under ${relation} adjacency at ` +
                             `a \u03b4 of at most ${number(delta)}.`);
    }
    return fits.reduce((a, b) => (b.delta > a.delta ? b : a));
  }

  function recommend(model, N, d, k, eps, delta, relation) {
    const c = privacyClass(model, delta, relation);
    const x = [Math.log10(N * eps / k), Math.log10(d), Math.log10(k)];
    const zq = x.map((v, i) => (v - c.mean[i]) / c.scale[i]);
    const near = c.regimes.map((r, j) => [Math.sqrt(r.x.reduce((s, v, i) =>
        s + (zq[i] - (v - c.mean[i]) / c.scale[i]) ** 2, 0)), j])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, model.neighbours);
    const alts = c.algorithms.map((name, a) => {
      const got = near.filter(([, j]) => c.regimes[j].y[a] !== null);
      if (!got.length) return null;
      const ys = got.map(([, j]) => c.regimes[j].y[a]);
      const here = got.some(([dj]) => dj < model.exact);
      const w = got.map(([dj]) => (here ? +(dj < model.exact) : 1 / (dj * dj)));
      const m = ys.reduce((s, y, i) => s + w[i] * y, 0) / w.reduce((s, v) => s + v, 0);
      const u = ys.reduce((s, y) => s + y, 0) / ys.length;
      const sd = Math.sqrt(ys.reduce((s, y) => s + (y - u) * (y - u), 0) / ys.length);
      const h = Math.max(sd + c.widen, 0);
      return {name, order: a, m, here, support: got.length, predicted: 10 ** m - 1,
              lo: 10 ** (m - h) - 1, hi: 10 ** (m + h) - 1};
    }).filter(Boolean);
    if (!alts.length) {
      throw new RequestError("No algorithm was measured at the nearest evaluated regimes.");
    }
    // the candidates: measured at the request itself where the book evaluated it, else at the
    // most of the nearest regimes; they come first, each group by prediction
    const most = Math.max(...alts.map(a => a.support));
    const anyHere = alts.some(a => a.here);
    for (const a of alts) a.candidate = anyHere ? a.here : a.support === most;
    const table = alts.slice().sort((a, b) =>
      (b.candidate - a.candidate) || (a.m - b.m) || (a.order - b.order));
    const slack = model.slack;
    const why = [];
    x.forEach((v, i) => {
      if (v < c.low[i] - slack) {
        why.push(`${COORDINATES[i]} = ${number(10 ** v)} is below the smallest measured, ` +
                 number(10 ** c.low[i]));
      } else if (v > c.high[i] + slack) {
        why.push(`${COORDINATES[i]} = ${number(10 ** v)} is above the largest measured, ` +
                 number(10 ** c.high[i]));
      }
    });
    if (near[0][0] > c.reach + slack) {
      why.push(`its nearest evaluated regime is farther from it (${number(near[0][0])} in ` +
               "standardised units) than any evaluated regime is from another dataset's " +
               `(at most ${number(c.reach)})`);
    }
    return {c, best: table[0], table, outside: why.length > 0, why,
            nearest: near.map(([, j]) => c.regimes[j].label)};
  }

  // --- the request, read from the form -------------------------------------------------------

  const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
  const SEPARATORS = /[\s,_'\u00a0\u202f]/g;

  function shown(raw) {
    const text = raw.trim();
    return text.length > 30 ? `${text.slice(0, 30)}\u2026` : text;
  }

  function parsed(raw, separators) {
    let text = raw.trim().replace(/^[\u2212\u2013]/, "-");
    if (separators) text = text.replace(SEPARATORS, "");
    return text;
  }

  function count(form, name, what) {
    const raw = form.elements[name].value;
    const text = parsed(raw, true);
    if (!text) throw new RequestError(`${what} is empty: enter a whole number of at least 1.`);
    const n = DECIMAL.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(n)) {
      throw new RequestError(`${what} must be a whole number, not \u201c${shown(raw)}\u201d.`);
    }
    if (n < 1) throw new RequestError(`${what} must be at least 1, got ${number(n)}.`);
    if (n > Number.MAX_SAFE_INTEGER) {
      throw new RequestError(`${what} is too large: at most ${grouped(Number.MAX_SAFE_INTEGER)}.`);
    }
    return n;
  }

  function real(form, name, what, range) {
    const raw = form.elements[name].value;
    const text = parsed(raw, false);
    if (!text) throw new RequestError(`${what} is empty: enter ${range}.`);
    const v = DECIMAL.test(text) ? Number(text) : NaN;
    if (Number.isNaN(v)) {
      throw new RequestError(`${what} must be a number (${range}), not \u201c${shown(raw)}\u201d.`);
    }
    if (!Number.isFinite(v)) throw new RequestError(`${what} must be finite, got ${shown(raw)}.`);
    return v;
  }

  function request(form, model) {
    const N = count(form, "N", "N (records)");
    const d = count(form, "d", "d (features)");
    const k = count(form, "k", "k (clusters)");
    if (k > N) {
      throw new RequestError(`k (clusters) must be at most N (records): got k = ${grouped(k)} ` +
                             `and N = ${grouped(N)}.`);
    }
    const eps = real(form, "epsilon", "\u03b5", "the budget, a number above 0");
    if (eps <= 0) throw new RequestError(`\u03b5 must be above 0, got ${number(eps)}.`);
    let delta = 0;
    if (form.elements["delta-choice"].value === "value") {
      delta = real(form, "delta", "\u03b4", "a number from 0 to below 1, or choose \u03b4 = 0");
      if (delta < 0 || delta >= 1) {
        throw new RequestError(`\u03b4 must lie in [0, 1), got ${number(delta)}.`);
      }
    }
    const relation = form.elements.neighbour.value;
    if (!model.classes.some(c => c.neighbour === relation)) {
      throw new RequestError(`The book measured nothing under the relation \u201c` +
                             `${shown(relation)}\u201d.`);
    }
    return {N, d, k, eps, delta, relation};
  }

  // --- the answer, written into the page -----------------------------------------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      node.setAttribute(name, value);
    }
    node.append(...children.map(child => (child instanceof Node ? child : String(child))));
    return node;
  }

  function privacyNote(c, delta) {
    const where = `\u03b4 = ${number(c.delta)}, ${c.neighbour} adjacency`;
    let text;
    if (delta === c.delta) {
      text = `Compared at equal privacy (${where}).`;
    } else if (c.delta > 0) {
      text = `Compared at equal privacy on the rows measured at ${where}: their algorithms ` +
             `also meet the requested \u03b4 = ${number(delta)}, so the answer is conservative.`;
    } else {
      text = `The book measured no (\u03b5, \u03b4) algorithm under ${c.neighbour} adjacency at ` +
             `a \u03b4 of at most ${number(delta)}: compared on the pure \u03b5-DP ones, ` +
             `which meet any \u03b4 (${where}).`;
    }
    if (c.algorithms.length === 1) text += " It is the only algorithm the book measured there.";
    return text;
  }

  function value(field, x) {
    return el("span", {class: `plan-calculator-${field}`, "data-value": String(x)}, number(x));
  }

  function alternatives(r, level) {
    const rows = r.table.map(a => el("tr", {class: a.candidate ? "plan-calculator-candidate" : ""},
      el("td", {}, el("code", {}, a.name)),
      el("td", {}, number(a.predicted)),
      el("td", {}, `${number(a.lo)} to ${number(a.hi)}`),
      el("td", {}, `${a.support} of ${r.nearest.length}`),
      el("td", {}, a.candidate ? "yes" : "no")));
    return el("div", {class: "plan-calculator-table"}, el("table", {},
      el("caption", {}, "Every algorithm measured at one of these regimes. The recommendation ",
         "is the lowest prediction among the candidates: the algorithms measured at the ",
         "request itself when the book evaluated it, else those measured at the most of the ",
         "nearest regimes."),
      el("thead", {}, el("tr", {}, el("th", {}, "algorithm"), el("th", {}, "predicted"),
                          el("th", {}, `${level} interval`), el("th", {}, "measured at"),
                          el("th", {}, "candidate"))),
      el("tbody", {}, ...rows)));
  }

  function answer(q, r, model) {
    const best = r.best;
    const level = percent(model.level);
    const parts = [
      el("p", {class: "plan-calculator-privacy"}, privacyNote(r.c, q.delta)),
      el("p", {class: "plan-calculator-best"},
         el("strong", {}, "Recommended: "), el("code", {class: "plan-calculator-algorithm"},
                                                best.name),
         ", predicted relative objective ", el("strong", {}, value("predicted", best.predicted)),
         ` (NICV over non-private Lloyd's, minus 1: 0 is as good as Lloyd, 1 twice its NICV); ` +
         `${level} interval `, value("lo", best.lo), " to ", value("hi", best.hi), "."),
    ];
    const rival = r.table.filter(a => a.candidate)[1];
    if (rival) {
      const close = best.lo <= rival.predicted && rival.predicted <= best.hi;
      parts.push(el("p", {}, "Next is ", el("code", {}, rival.name),
                    ` at ${number(rival.predicted)}` + (close
                      ? ", inside that interval: the evidence does not separate the two."
                      : ".")));
    }
    const fewer = r.table.filter(a => !a.candidate && a.predicted < best.predicted)
      .reduce((a, b) => (a === null || b.predicted < a.predicted ? b : a), null);
    if (fewer) {
      parts.push(el("p", {}, el("code", {}, fewer.name),
                    ` is predicted lower, at ${number(fewer.predicted)}, but from only ` +
                    `${fewer.support} of those ${r.nearest.length} regimes.`));
    }
    parts.push(r.outside
      ? el("p", {class: "plan-calculator-where plan-calculator-outside"},
           el("strong", {}, "Outside everything the book measured at this privacy: "),
           `${r.why.join("; ")}. The numbers extrapolate from the nearest regimes and may be ` +
           "far off.")
      : el("p", {class: "plan-calculator-where"},
           "Within the regimes the book measured at this privacy."));
    parts.push(el("p", {}, `It rests on the ${r.nearest.length} nearest evaluated regimes ` +
                  `(a dataset at one k and \u03b5), nearest first, for ` +
                  `N\u00b7\u03b5/k = ${number(q.N * q.eps / q.k)}, d = ${grouped(q.d)} and ` +
                  `k = ${grouped(q.k)}:`));
    parts.push(el("ol", {class: "plan-calculator-nearest"},
                  ...r.nearest.map(label => el("li", {}, label))));
    parts.push(alternatives(r, level));
    return el("div", {class: "plan-calculator-answer", "data-outside": String(r.outside),
                      "data-algorithm": best.name}, ...parts);
  }

  function problem(text) {
    return el("p", {class: "plan-calculator-error", role: "alert"}, text);
  }

  // --- wiring --------------------------------------------------------------------------------

  function loadedModel() {
    const model = window.dpkmeansPlanModel;
    if (!model || model.format !== "dpkmeans-recommend" || model.version !== 1 ||
        !Array.isArray(model.classes)) {
      throw new RequestError("The calculator's model did not load with this page, so it " +
                             "cannot answer: reload the page, or run python -m dpkmeans plan.");
    }
    return model;
  }

  function start(box) {
    const form = box.querySelector("form.plan-calculator-form");
    const out = box.querySelector(".plan-calculator-result");
    if (!form || !out) return;
    const update = () => {
      let shownNow;
      try {
        const model = loadedModel();
        const q = request(form, model);
        shownNow = answer(q, recommend(model, q.N, q.d, q.k, q.eps, q.delta, q.relation),
                          model);
      } catch (error) {
        shownNow = problem(error instanceof RequestError ? error.message
          : `The calculator failed on this request (${error.message}).`);
      }
      out.replaceChildren(shownNow);
    };
    form.addEventListener("submit", event => { event.preventDefault(); update(); });
    form.addEventListener("input", event => {
      if (event.target.name === "delta") form.elements["delta-choice"].value = "value";
      update();
    });
    form.addEventListener("change", update);
    update();
  }

  const init = () => document.querySelectorAll(".plan-calculator").forEach(start);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
