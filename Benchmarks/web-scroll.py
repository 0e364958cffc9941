#!/usr/bin/env python3
"""Scrolls a million-row list in headless Chromium at a steady speed and
measures the page (Benchmarks/README.md, "Web app"):

    CHECKLISTD=.build/release/checklistd python3 Benchmarks/web-scroll.py [--rows-per-second 10000] [--seconds 10]

A requestAnimationFrame loop moves the list's scroll position by
rows-per-second x row height x frame time each frame, for the given time,
and records every frame's duration; a MutationObserver counts row elements
rebound to another row index (`data-index`) and filled with an item
(`data-item-id` set), and each frame counts the row elements shown without
an item (placeholders, "Loading..."). Reports frame time p50/p99/max, frames
over 16.7 ms, rows bound and filled per second, placeholder rows (in all and
as a share of the rows shown over the frames, and the frames showing any),
row elements and DOM nodes (at the end),
the JS heap (performance.memory), the visible rows still "Loading..." when
the scrolling stops, and how long until they are filled. Starts its own checklistd (port 0) and seeds the
list with `checklist import` of a generated snapshot (Tests/Browser/seed_snapshot.py).
"""
import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
import browser_test as bt  # noqa: E402  (exits 77 when Chromium or selenium is missing)
import seed_snapshot  # noqa: E402

SCROLL = """
const [rowsPerSecond, seconds, items, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
const c = document.querySelector('[data-role="rows"]');
// Scroll pixels per row: the view may scale a list taller than the browser's
// largest element, so take it from the scroll range, not from a row's height.
const rowHeight = c.scrollHeight / items;
let rebound = 0, filled = 0;
const observer = new MutationObserver((records) => {
  for (const m of records) {
    if (m.attributeName === 'data-index') rebound++;
    else if (m.target.hasAttribute('data-item-id')) filled++;
  }
});
observer.observe(c, { subtree: true, attributes: true, attributeFilter: ['data-index', 'data-item-id'] });
// Placeholders: row elements of the pool (not hidden) showing no item (no
// data-item-id, i.e. "Loading..."), counted each frame as the previous frame
// painted them. A live collection, read without layout.
const rows = c.getElementsByClassName('row');
let placeholders = 0, shownRows = 0, framesWithPlaceholders = 0;
const frames = [];
let start = null, last = null, position = c.scrollTop;
function step(now) {
  if (start === null) { start = now; last = now; requestAnimationFrame(step); return; }
  const dt = now - last;
  frames.push(dt);
  let empty = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.hidden) continue;
    shownRows++;
    if (!r.hasAttribute('data-item-id')) empty++;
  }
  placeholders += empty;
  if (empty > 0) framesWithPlaceholders++;
  last = now;
  position += rowsPerSecond * rowHeight * dt / 1000;
  c.scrollTop = position;
  if (now - start < seconds * 1000) { requestAnimationFrame(step); return; }
  observer.disconnect();
  const stopped = performance.now();
  const loadingRows = () => [...c.querySelectorAll('.row:not([hidden])')]
    .filter((r) => r.querySelector('[data-role="text"]').textContent.startsWith('Loading')).length;
  const loadingAtStop = loadingRows();
  const settle = () => {
    if (loadingRows() > 0 && performance.now() - stopped < 10000) { requestAnimationFrame(settle); return; }
    const visible = [...c.querySelectorAll('.row:not([hidden])')];
    done({ frames, elapsedMs: now - start, rebound, filled, rowHeight, loadingAtStop,
      placeholders, shownRows, framesWithPlaceholders,
      settleMs: performance.now() - stopped,
      rowElements: c.querySelectorAll('.row').length,
      domNodes: document.getElementsByTagName('*').length,
      heapBytes: performance.memory ? performance.memory.usedJSHeapSize : null,
      firstIndex: Number(visible[0]?.dataset.index),
      loading: loadingRows() });
  };
  requestAnimationFrame(settle);
}
requestAnimationFrame(step);
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows-per-second", type=int, default=10000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--items", type=int, default=1000000)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="checklists-web-scroll-")
    server = bt.Server(os.path.join(work, "data"))
    driver = None
    try:
        snapshot = os.path.join(work, "list.ckss.gz")
        seed_snapshot.write(snapshot, options.items)
        server.cli("import", snapshot)
        list_id = next(s["id"] for s in server.json("lists") if s["itemCount"] == options.items)
        driver = bt.browser(os.path.join(work, "profile"))
        driver.set_script_timeout(options.seconds + 30)
        driver.get(f"{server.web}/#list={list_id}")
        bt.wait(driver, bt.bound_rows, "the list shows its rows")
        r = driver.execute_async_script(SCROLL, options.rows_per_second, options.seconds, options.items)
        frames = sorted(r["frames"])
        quantile = lambda q: frames[min(len(frames) - 1, int(q * len(frames)))]
        over = sum(1 for f in frames if f > 1000 / 60 + 0.5)
        result = {
            "rowsPerSecondAsked": options.rows_per_second, "seconds": round(r["elapsedMs"] / 1000, 2),
            "frames": len(frames), "frameP50Ms": round(quantile(0.5), 2), "frameP99Ms": round(quantile(0.99), 2),
            "frameMaxMs": round(frames[-1], 2), "framesOver16_7ms": over,
            "framesWithin16_7msPercent": round(100 * (len(frames) - over) / len(frames), 2),
            "rowsBoundPerSecond": round(r["rebound"] / (r["elapsedMs"] / 1000)),
            "rowsFilledPerSecond": round(r["filled"] / (r["elapsedMs"] / 1000)),
            "placeholderRowsShown": r["placeholders"], "rowsShown": r["shownRows"],
            "placeholderRowsPercent": round(100 * r["placeholders"] / max(1, r["shownRows"]), 2),
            "framesWithPlaceholders": r["framesWithPlaceholders"],
            "rowsScrolled": r["firstIndex"], "rowElements": r["rowElements"], "domNodes": r["domNodes"],
            "jsHeapBytes": r["heapBytes"], "visibleRowsLoadingAtStop": r["loadingAtStop"],
            "msUntilFilledAfterStop": round(r["settleMs"]), "visibleRowsLoadingAfter": r["loading"],
        }
        if options.json:
            print(json.dumps(result))
        else:
            for k, v in result.items():
                print(f"{k:28} {v}")
    finally:
        if driver:
            driver.quit()
        server.stop()
        os.system(f"rm -rf {work}")


if __name__ == "__main__":
    main()
