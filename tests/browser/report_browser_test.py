#!/usr/bin/env python3
"""Browser test of report.html (ctest label "browser"; python3 standard library only).

Runs the main job (`trainsim` with no arguments) in a temporary folder, then renders the report.html it wrote in
headless Chromium and checks that:
  1. the four files (report.html, summary.md, result.json, result.csv) exist and are not empty;
  2. the page logs nothing to the console: no "Uncaught" error, no Content-Security-Policy violation, no blocked load
     (Chromium's --enable-logging=stderr prints every console message as a ":CONSOLE" line). A canary page with an
     inline script and an external image under the same policy must produce such lines first, so that this check
     cannot pass because the detection broke;
  3. every one of the seven charts is in the DOM Chromium built (--dump-dom) with real content (svg[data-chart]
     with at least MIN_ELEMENTS descendant elements) and no <script> element exists;
  4. every chart was laid out with a non-zero box: a harness page (not the report) loads the report in an iframe and
     measures each svg[data-chart] with getBoundingClientRect (--allow-file-access-from-files makes the file
     same-origin for the harness; the report itself runs no script);
  5. a full-page screenshot (1280 x 4000) is saved under --artifacts; its path is printed.

Usage: report_browser_test.py --trainsim BIN --chromium BIN --artifacts DIR
"""
import argparse
import glob
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHARTS = ["step-breakdown", "pipeline-timeline", "memory", "failure-timeline", "time-to-train-cdf", "cost-waterfall",
          "sensitivity-tornado"]
MIN_ELEMENTS = 6  # a chart that only says "nothing to draw" has a frame, a note and its title: 3
FILES = ["report.html", "summary.md", "result.json", "result.csv"]
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)
    return ok


def chromium(binary, profile, args, url, timeout=120):
    """Runs headless Chromium once; returns (stdout, console lines from stderr)."""
    cmd = [binary, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
           "--disable-extensions", "--hide-scrollbars", "--user-data-dir=" + profile, "--enable-logging=stderr",
           "--v=0"] + args + [url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    console = [line for line in p.stderr.splitlines()
               if ":CONSOLE" in line or "Uncaught" in line or "Content Security Policy" in line]
    return p.stdout, console


class ChartCounter(html.parser.HTMLParser):
    """Counts the descendant elements of each svg[data-chart], and <script> elements anywhere."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.charts = {}
        self.scripts = 0
        self.current = None
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        if self.current is not None:
            self.charts[self.current] += 1
            if tag not in self.VOID:
                self.depth += 1
            return
        if tag == "svg":
            chart = dict(attrs).get("data-chart")
            if chart is not None:
                self.current = chart
                self.charts[chart] = 0
                self.depth = 1

    def handle_startendtag(self, tag, attrs):
        if self.current is not None:
            self.charts[self.current] += 1

    def handle_endtag(self, tag):
        if self.current is None or tag in self.VOID:
            return
        self.depth -= 1
        if self.depth == 0:
            self.current = None


HARNESS = """<!DOCTYPE html><html><body>
<iframe id="r" src="report.html" style="width:1280px;height:4000px;border:0"></iframe><pre id="out">pending</pre>
<script>
window.addEventListener('load', function () {
  var out = {charts: {}};
  try {
    var d = document.getElementById('r').contentDocument;
    d.querySelectorAll('svg[data-chart]').forEach(function (s) {
      var b = s.getBoundingClientRect();
      out.charts[s.getAttribute('data-chart')] = {width: b.width, height: b.height,
                                                  elements: s.querySelectorAll('*').length};
    });
    out.scripts = d.querySelectorAll('script').length;
  } catch (e) { out.error = String(e); }
  document.getElementById('out').textContent = JSON.stringify(out);
});
</script></body></html>
"""

CANARY = """<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="%s"></head>
<body><p>canary</p><script>console.log("inline script ran")</script><img src="http://example.invalid/x.png"></body></html>
""" % CSP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainsim", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--artifacts", required=True)
    a = ap.parse_args()
    a.trainsim, a.artifacts = os.path.abspath(a.trainsim), os.path.abspath(a.artifacts)
    os.makedirs(a.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="trainsim-browser-")
    profile = os.path.join(work, "chromium-profile")

    # 1. The main job, as a user runs it: no arguments, into trainsim-out/<name> under the current folder.
    p = subprocess.run([a.trainsim], cwd=work, capture_output=True, text=True, timeout=600)
    if not check(p.returncode == 0, "trainsim (main job) exits 0"):
        print(p.stderr)
        return 1
    folders = glob.glob(os.path.join(work, "trainsim-out", "*"))
    if not check(len(folders) == 1, "the main job wrote one folder under trainsim-out/"):
        return 1
    out = folders[0]
    for f in FILES:
        path = os.path.join(out, f)
        check(os.path.isfile(path) and os.path.getsize(path) > 0, "%s written (%d bytes)" %
              (f, os.path.getsize(path) if os.path.isfile(path) else 0))
    report = os.path.join(out, "report.html")
    with open(report, encoding="utf-8") as fh:
        page = fh.read()
    check(('content="%s"' % CSP) in page, "report.html carries the Content-Security-Policy meta")

    # 2. The console detector sees a violation on the canary page (else the console check below proves nothing).
    canary = os.path.join(work, "canary.html")
    with open(canary, "w", encoding="utf-8") as fh:
        fh.write(CANARY)
    _, canary_console = chromium(a.chromium, profile, ["--dump-dom"], "file://" + canary)
    check(any("Content Security Policy" in line for line in canary_console),
          "console detector catches the canary's CSP violations (%d lines)" % len(canary_console))

    # 3. The report's DOM, and its console.
    dom, console = chromium(a.chromium, profile, ["--dump-dom"], "file://" + report)
    counter = ChartCounter()
    counter.feed(dom)
    for chart in CHARTS:
        n = counter.charts.get(chart, -1)
        check(n >= MIN_ELEMENTS, "chart %-20s in the DOM with %d elements (>= %d)" % (chart, n, MIN_ELEMENTS))
    check(counter.scripts == 0, "no <script> element in the report's DOM")

    # 5. The screenshot (also a second look at the console).
    shot = os.path.join(a.artifacts, "report.png")
    if os.path.exists(shot):
        os.remove(shot)
    _, console2 = chromium(a.chromium, profile, ["--screenshot=" + shot, "--window-size=1280,4000"], "file://" + report)
    check(os.path.isfile(shot) and os.path.getsize(shot) > 20000,
          "screenshot saved: %s (%d bytes)" % (shot, os.path.getsize(shot) if os.path.isfile(shot) else 0))
    console += console2
    for line in console:
        print("      console: " + line)
    check(not console, "no console messages from the report (errors, CSP violations, blocked loads)")

    # 4. Layout: every chart has a non-zero box.
    with open(os.path.join(out, "harness.html"), "w", encoding="utf-8") as fh:
        fh.write(HARNESS)
    dom, _ = chromium(a.chromium, profile, ["--allow-file-access-from-files", "--virtual-time-budget=10000",
                                            "--dump-dom"], "file://" + os.path.join(out, "harness.html"))
    start, end = dom.find('<pre id="out">'), dom.find("</pre>")
    try:
        measured = json.loads(html.unescape(dom[start + len('<pre id="out">'):end]))
    except ValueError:
        measured = {"error": "no measurement in the harness page"}
    check("error" not in measured, "harness measured the report (%s)" % measured.get("error", "ok"))
    for chart in CHARTS:
        box = measured.get("charts", {}).get(chart, {})
        check(box.get("width", 0) > 100 and box.get("height", 0) > 50,
              "chart %-20s laid out at %.0f x %.0f px" % (chart, box.get("width", 0), box.get("height", 0)))

    print("screenshot: " + shot)
    shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
