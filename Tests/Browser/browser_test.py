#!/usr/bin/env python3
"""The web app in a real browser: headless Chromium driven by Selenium against
checklistd's web port (docs/WEB.md). Run by Tests/IntegrationTests/
BrowserTests.swift (the README's test command), or by hand:

    CHECKLISTD=.build/debug/checklistd python3 Tests/Browser/browser_test.py

Nothing leaves this machine: Debian's chromium and chromedriver are given by
path (Selenium Manager never runs), SE_AVOID_STATS=true, and Chromium starts
without background networking, component updates or sync.

Exit 0: every scenario passed; 1: one failed (the reason on stderr); 77:
Chromium, chromedriver or selenium is missing (skipped, the reason on stderr).
Screenshots (PNG) go to SCREENSHOTS (default .build/screenshots); their paths
are printed.
"""
import functools
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
SKIP = 77
MILLION = int(os.environ.get("BROWSER_TEST_ITEMS", "1000000"))

sys.path.insert(0, HERE)
import seed_snapshot  # noqa: E402


def skip(reason):
    print("browser tests skipped: " + reason, file=sys.stderr)
    sys.exit(SKIP)


for path in (CHROMIUM, CHROMEDRIVER):
    if not os.access(path, os.X_OK):
        skip(f"{path} is missing (apt-get install chromium chromium-driver; .ci/run does)")
try:
    os.environ["SE_AVOID_STATS"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    skip("the selenium module is missing (pip install selenium; .ci/run does)")

CHECKLISTD = os.environ.get("CHECKLISTD", os.path.join(ROOT, ".build/debug/checklistd"))
CHECKLIST = os.environ.get("CHECKLIST", os.path.join(os.path.dirname(CHECKLISTD), "checklist"))
SCREENSHOTS = os.environ.get("SCREENSHOTS", os.path.join(ROOT, ".build/screenshots"))


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Server:
    """A checklistd child: its ports from the readiness lines."""

    def __init__(self, data_dir, extra=(), port=0, web_port=0):
        self.data_dir = data_dir
        args = [CHECKLISTD, "--port", str(port), "--web-port", str(web_port), "--data-dir", data_dir, *extra]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = self.web_port = None
        for line in self.process.stdout:
            match = re.search(r"(web|listening) on [^ ]*:(\d+)$", line.strip())
            if match and match.group(1) == "web":
                self.web_port = int(match.group(2))
            elif match:
                self.port = int(match.group(2))
                break
        check(self.port and self.web_port, "checklistd did not print its web and listening lines")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    @property
    def web(self):
        return f"http://127.0.0.1:{self.web_port}"

    def cli(self, *args):
        out = subprocess.run([CHECKLIST, "--server", self.address, *args], capture_output=True, text=True, timeout=120)
        check(out.returncode == 0, f"checklist {' '.join(args)} failed: {out.stderr}")
        return out.stdout

    def json(self, *args):
        return json.loads(self.cli("--json", *args))

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


def static_server(directory):
    """Serves Clients/ on a port of its own: a page that loads while checklistd is down."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=directory)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--no-sandbox", "--disable-dev-shm-usage",
                 "--window-size=1100,900", "--enable-precise-memory-info", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    return driver


def wait(driver, condition, message, timeout=20):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
    except Exception as error:
        raise Failure(f"{message} (waited {timeout} s: {error.__class__.__name__})")


def shot(driver, name):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    path = os.path.join(SCREENSHOTS, name)
    driver.save_screenshot(path)
    print(f"screenshot: {path}")


def subtitle(s):
    if s["itemCount"] == 0:
        return "(No Items)"
    if s["uncheckedCount"] == 0:
        return "All Done!"
    return f"{s['uncheckedCount']} Remaining"


ROWS_STATE = """
const c = document.querySelector('[data-role="rows"]');
if (!c) return null;
const box = c.getBoundingClientRect();
const rows = [...c.querySelectorAll('.row')];
const visible = rows.filter((r) => { if (r.hidden) return false; const b = r.getBoundingClientRect();
  return b.bottom > box.top && b.top < box.bottom; });
return { scrollTop: c.scrollTop, scrollHeight: c.scrollHeight, clientHeight: c.clientHeight, domRows: rows.length,
  visible: visible.map((r) => ({ index: Number(r.dataset.index), id: r.dataset.itemId ?? null,
    text: r.querySelector('[data-role="text"]').textContent, checked: r.dataset.checked ?? null })) };
"""


def rows_state(driver):
    return driver.execute_script(ROWS_STATE)


def bound_rows(driver):
    state = rows_state(driver)
    if not state or not state["visible"] or any(r["id"] is None for r in state["visible"]):
        return None
    return state


def scenario_overview(driver, server):
    driver.get(server.web + "/")
    lists = server.json("lists")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-list-id]")) == len(lists),
         f"the overview shows {len(lists)} lists")
    for s in lists:
        row = driver.find_element(By.CSS_SELECTOR, f'[data-list-id="{s["id"]}"]')
        name = row.find_element(By.CSS_SELECTOR, '[data-role="name"]').text
        sub = row.find_element(By.CSS_SELECTOR, '[data-role="subtitle"]').text
        check(name == s["name"], f"list {s['id']} is named {name!r}, not {s['name']!r}")
        check(sub == subtitle(s), f"list {s['id']} says {sub!r}, not {subtitle(s)!r}")
    check(any(s["name"] == "Groceries" for s in lists), "the demo lists are there")
    shot(driver, "overview.png")
    print(f"ok: the overview shows the {len(lists)} lists with their counts")


def scenario_million(driver, server, list_id):
    driver.get(f"{server.web}/#list={list_id}")
    state = wait(driver, bound_rows, "the million-row list shows rows")
    check(state["scrollHeight"] > 1000 * state["clientHeight"], "the scrollbar covers the whole list")

    def at(fraction, label):
        driver.execute_script("const c = document.querySelector('[data-role=\"rows\"]');"
                              "c.scrollTop = (c.scrollHeight - c.clientHeight) * arguments[0];", fraction)
        target = int((MILLION - 1) * fraction)

        def settled(d):
            s = bound_rows(d)
            if not s:
                return None
            indexes = [r["index"] for r in s["visible"]]
            return s if min(indexes) <= target <= max(indexes) + 1 or (fraction == 1 and max(indexes) == MILLION - 1) else None
        s = wait(driver, settled, f"rows around {target} are bound after scrolling to the {label}")
        for r in s["visible"]:
            want = seed_snapshot.item_text(r["index"])
            check(r["text"] == want, f"row {r['index']} shows {r['text']!r}, not {want!r}")
            check(r["checked"] == ("true" if r["index"] % 3 == 0 else "false"), f"row {r['index']} check mark")
        check(s["domRows"] <= 2 * len(s["visible"]),
              f"{s['domRows']} row elements in the DOM for {len(s['visible'])} visible rows (at most twice)")
        return s
    middle = at(0.5, "middle")
    end = at(1.0, "end")
    check(end["visible"][-1]["index"] == MILLION - 1, "the last row is the list's last item")
    shot(driver, "million-rows-end.png")
    print(f"ok: {MILLION} rows: middle and end show the right texts; {middle['domRows']} row elements "
          f"for {len(middle['visible'])} visible")


def scenario_two_tabs(a, b, server, list_id):
    for d in (a, b):
        d.get(f"{server.web}/#list={list_id}")
        wait(d, bound_rows, "the list shows its rows")
    first = bound_rows(a)["visible"][0]
    before = first["checked"]
    b.execute_script("""
        const id = arguments[0];
        window.__seenAt = null;
        new MutationObserver(() => {
          const row = document.querySelector(`[data-item-id="${id}"]`);
          if (row && row.dataset.checked !== arguments[1] && window.__seenAt === null) window.__seenAt = Date.now();
        }).observe(document.querySelector('[data-role="rows"]'), { subtree: true, attributes: true });
    """, first["id"], before)
    clicked_at = a.execute_script("""
        const row = document.querySelector(`[data-item-id="${arguments[0]}"]`);
        const t = Date.now(); row.querySelector('[data-role="check"]').click(); return t;""", first["id"])
    wait(b, lambda d: d.execute_script("return window.__seenAt"), "the check shows in the other tab", timeout=5)
    delay = b.execute_script("return window.__seenAt") - clicked_at
    check(delay <= 1000, f"the check took {delay} ms to show in the other tab (at most 1000)")
    shot(a, "list.png")
    print(f"ok: a check in one tab showed in the other after {delay} ms")


def scenario_offline(driver, server, static_port, list_id):
    """Kill the server, edit, reload while it is down, restart: applied once, and live again."""
    page = (f"http://127.0.0.1:{static_port}/web/index.html?server=ws://127.0.0.1:{server.web_port}/ws"
            f"#list={list_id}")
    driver.get(page)
    state = lambda want: (lambda d: d.find_element(By.CSS_SELECTOR, '[data-role="connection"]')
                          .get_attribute("data-state") == want)
    wait(driver, state("open"), "the page (from another origin, allowed) connects")
    wait(driver, bound_rows, "the list shows its rows")
    target = bound_rows(driver)["visible"][1]
    server.kill()
    wait(driver, state("offline"), "the page notices the server is gone")
    driver.find_element(By.CSS_SELECTOR, f'[data-item-id="{target["id"]}"] [data-role="check"]').click()
    form = driver.find_element(By.CSS_SELECTOR, '[data-role="add-item"]')
    form.find_element(By.NAME, "text").send_keys("Added while offline")
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"]').click()
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-pending]")) >= 1, "the edits show as pending")
    driver.get(page)  # reload while the server is down
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-role="outbox"] li')) >= 2,
         "the two edits are still queued after a reload")
    restarted = Server(server.data_dir, port=server.port, web_port=server.web_port,
                       extra=["--web-allowed-origin", f"http://127.0.0.1:{static_port}"])
    wait(driver, state("open"), "the page reconnects to the restarted server", timeout=30)
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, '[data-role="outbox"] li'), "the queue empties")
    items = restarted.json("show", str(list_id), "--limit", "1000")
    items = items.get("items", items) if isinstance(items, dict) else items
    added = [i for i in items if i["text"] == "Added while offline"]
    check(len(added) == 1, f"the offline insert is applied exactly once (found {len(added)})")
    flipped = [i for i in items if i["id"] == int(target["id"])]
    check(flipped and flipped[0]["checked"] == (target["checked"] != "true"), "the offline check is applied")
    restarted.cli("add", str(list_id), "Added by another client")
    wait(driver, lambda d: "Added by another client" in d.find_element(By.CSS_SELECTOR, '[data-role="rows"]').text,
         "a change after the restart shows live (the page resumed)")
    print("ok: killed and restarted: the page reconnected; offline edits survived a reload and applied once")
    return restarted


def scenario_bad_token(driver, work):
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write("good-token default\n")
    server = Server(os.path.join(work, "data-tokens"), extra=["--tokens", tokens])
    try:
        driver.get(f"{server.web}/#token=wrong-token")
        error = wait(driver, lambda d: (lambda e: e if e.is_displayed() else None)(
            d.find_element(By.CSS_SELECTOR, '[data-role="auth-error"]')), "the refusal is shown")
        check("refused" in error.text, f"the message says the token was refused: {error.text!r}")
        field = driver.find_element(By.CSS_SELECTOR, '[data-role="token"]')
        field.send_keys("good-token")
        driver.find_element(By.CSS_SELECTOR, '[data-role="token-form"] button[type="submit"]').click()
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, '[data-role="connection"]').get_attribute("data-state")
             == "open", "the right token, entered in the token field, is accepted")
        print("ok: a bad token is refused with a message")
    finally:
        server.stop()


def main():
    work = tempfile.mkdtemp(prefix="checklists-browser-")
    servers, drivers = [], []
    httpd = static_server(os.path.join(ROOT, "Clients"))
    try:
        data = os.path.join(work, "data")
        server = Server(data, extra=["--seed-demo", "--web-allowed-origin", f"http://127.0.0.1:{httpd.server_port}"])
        servers.append(server)
        snapshot = os.path.join(work, "million.ckss.gz")
        seed_snapshot.write(snapshot, MILLION, name="A million rows")
        server.cli("import", snapshot)
        lists = server.json("lists")
        million = next(s["id"] for s in lists if s["itemCount"] == MILLION)
        groceries = next(s["id"] for s in lists if s["name"] == "Groceries")
        a = browser(os.path.join(work, "profile-a"))
        drivers.append(a)
        b = browser(os.path.join(work, "profile-b"))
        drivers.append(b)
        scenario_overview(a, server)
        scenario_million(a, server, million)
        scenario_two_tabs(a, b, server, groceries)
        servers.append(scenario_offline(a, server, httpd.server_port, groceries))
        scenario_bad_token(b, work)
        print("browser tests passed")
        return 0
    except Failure as failure:
        print(f"browser test failed: {failure}", file=sys.stderr)
        for i, d in enumerate(drivers):
            try:
                shot(d, f"failure-{i}.png")
            except Exception:
                pass
        return 1
    finally:
        for d in drivers:
            d.quit()
        for s in servers:
            s.stop()
        httpd.shutdown()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
