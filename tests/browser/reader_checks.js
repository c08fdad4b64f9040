// What a reader sees, measured in the page (tests/browser/test_pages.py runs this on every
// page). Returns {rawTex, wide, small, unlinked, viewport, text, visibleText, unresolved}; each
// entry names the element so that a failure says where to look.
const article = document.querySelector("article.bd-article") || document.body;
const describe = (el) => {
  const fig = el.closest("figure");
  const caption = fig && fig.querySelector("figcaption");
  const section = el.closest("section");
  const where = caption ? caption.textContent : (section && section.id) || "";
  const text = (el.textContent || el.getAttribute("src") || "").trim().replace(/\s+/g, " ");
  return `<${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ")[0] : ""}>`
    + ` in ${where.trim().slice(0, 60)}: ${text.slice(0, 80)}`;
};
// Text outside rendered math, code and scripts: where raw TeX must not be.
const SKIP = "mjx-container, pre, code, script, style, kbd, samp, textarea, .MathJax";
const prose = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const parent = node.parentElement;
  if (parent && !parent.closest(SKIP) && node.textContent.trim()) prose.push([parent, node.textContent]);
}
const TEX = /\$|\\\(|\\\)|\\\[|\\\]|\\[A-Za-z]+|\^\{|_\{/;
const rawTex = [];
for (const [parent, text] of prose) {
  const m = text.match(TEX);
  if (m) rawTex.push(`${JSON.stringify(m[0])} in ${describe(parent)}`);
}
// Wider than the column: a scroll container that scrolls sideways, or an element that
// sticks out of the article. Explicit scroll containers (class "wide-table") are allowed.
const box = article.getBoundingClientRect();
const style = getComputedStyle(article);
const left = box.left + parseFloat(style.paddingLeft) - 1;
const right = box.right - parseFloat(style.paddingRight) + 1;
const wide = [];
for (const el of article.querySelectorAll("*")) {
  if (el.closest(".wide-table") || el.closest("details:not([open])")) continue;
  const cs = getComputedStyle(el);
  if (cs.display === "none" || cs.visibility === "hidden") continue;
  const scrolls = ["auto", "scroll"].includes(cs.overflowX);
  if (scrolls && el.scrollWidth > el.clientWidth + 1) {
    wide.push(`scrolls sideways (${el.scrollWidth} > ${el.clientWidth} px): ${describe(el)}`);
    continue;
  }
  let clipped = false;
  for (let a = el.parentElement; a && a !== article; a = a.parentElement) {
    if (getComputedStyle(a).overflowX !== "visible") { clipped = true; break; }
  }
  if (clipped) continue;
  const r = el.getBoundingClientRect();
  if (r.width > 0 && (r.right > right || r.left < left)) {
    wide.push(`sticks out of the column (${Math.round(r.left)}..${Math.round(r.right)} px,`
      + ` column ${Math.round(left)}..${Math.round(right)}): ${describe(el)}`);
  }
}
// Wider than the window (the phone check, run at 390 px): an element of the article whose box
// runs past the window's edges, unless an ancestor between it and the window scrolls
// sideways (overflow-x auto or scroll: the reader scrolls that box to see it).
const viewport = [];
const windowWidth = document.documentElement.clientWidth;
const scrollsAbove = (el) => {
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) return true;
  }
  return false;
};
for (const el of article.querySelectorAll("*")) {
  // MathJax's copy for screen readers is laid out but never shown
  if (el.closest("details:not([open])") || el.closest("mjx-assistive-mml")) continue;
  const cs = getComputedStyle(el);
  if (cs.display === "none" || cs.visibility === "hidden") continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0 || (r.right <= windowWidth + 1 && r.left >= -1)) continue;
  if (scrollsAbove(el)) continue;
  // report the outermost offender only: its children stick out with it
  const parent = el.parentElement;
  const pr = parent && parent.getBoundingClientRect();
  if (pr && (pr.right > windowWidth + 1 || pr.left < -1) && !scrollsAbove(parent)
      && article.contains(parent) && parent !== article) continue;
  viewport.push(`${Math.round(r.left)}..${Math.round(r.right)} px in a ${windowWidth} px`
    + ` window: ${describe(el)}`);
}
// Figures shown too small: below 60% of their natural width; and those of them that do not
// link their full-size file (on a phone, a figure shrunk to the screen needs the link).
const small = [];
const unlinked = [];
for (const img of article.querySelectorAll("img")) {
  if (!img.naturalWidth) continue;
  const shown = img.getBoundingClientRect().width / img.naturalWidth;
  if (shown >= 0.6) continue;
  small.push(`${Math.round(100 * shown)}% of ${img.naturalWidth} px: ${describe(img)}`);
  const link = img.closest("a[href]");
  if (!link || link.href !== img.src) {
    unlinked.push(`${Math.round(100 * shown)}%: ${describe(img)}`);
  }
}
return {rawTex, wide, small, unlinked, viewport, text: document.body.textContent,
        visibleText: prose.map(([, t]) => t).join(" "),
        unresolved: Array.from(article.querySelectorAll(".problematic, .xref.missing"))
          .map(describe)};
