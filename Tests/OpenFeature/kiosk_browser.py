"""Drives Debian's Chromium (headless, through chromedriver and Selenium) through the kiosk example against a
real pwflagsd; run by OFREPBrowserTests.

1. Serves examples/kiosk/ from two loopback origins and prints {"allowed": ORIGIN, "denied": ORIGIN}.
2. Reads one line {"base", "token", "flag", "flagsFile", "newFlags", "old", "new"} from stdin: the daemon the test
   started with AllowedOrigins set to the allowed origin.
3. The allowed page must show `old`, see 304 after its stream opened, then, once the flags file is replaced by
   `newFlags`, show `new` within 2 s after a 200 with a new ETag. The denied page must never read the flag.
Prints one JSON line of results and exits 0 when every check holds, 1 otherwise.
"""

import functools
import http.server
import json
import os
import pathlib
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

KIOSK = pathlib.Path(__file__).resolve().parents[2] / "examples" / "kiosk"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve():
    handler = functools.partial(Quiet, directory=str(KIOSK))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def wait(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    return condition()


def main():
    _, allowed = serve()
    _, denied = serve()
    print(json.dumps({"allowed": allowed, "denied": denied}), flush=True)
    setup = json.loads(sys.stdin.readline())
    fragment = f"#base={setup['base']}&token={setup['token']}&flag={setup['flag']}"
    results = {"checks": {}}
    checks = results["checks"]

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        value = lambda: driver.find_element("id", "value").text
        log = lambda: driver.execute_script("return window.kioskLog || []")

        driver.get(allowed + "/index.html" + fragment)
        checks["allowed page shows the flag"] = wait(lambda: value() == setup["old"], 10) or value()
        # The stream opened and the page re-fetched: nothing changed, so 304.
        checks["304 while unchanged"] = bool(wait(lambda: any(e["status"] == 304 for e in log()), 10))
        first = log()
        first_etag = first[0].get("etag")

        new_flags = pathlib.Path(setup["flagsFile"] + ".new")
        new_flags.write_text(setup["newFlags"])
        start = time.monotonic()
        os.rename(new_flags, setup["flagsFile"])
        shown = wait(lambda: value() == setup["new"], 5)
        elapsed = time.monotonic() - start
        results["secondsToNewValue"] = round(elapsed, 3)
        checks["new value shown within 2 s"] = bool(shown) and elapsed <= 2.0
        after = log()[len(first):]
        checks["200 with a new ETag"] = any(e["status"] == 200 and e.get("etag") not in (None, first_etag) for e in after)
        results["allowedLog"] = log()

        driver.get(denied + "/index.html" + fragment)
        checks["denied page cannot read"] = bool(wait(lambda: value().startswith("cannot read the flags"), 10))
        checks["denied page never shows the flag"] = value() not in (setup["old"], setup["new"])
        results["deniedLog"] = log()
        results["deniedValue"] = value()
    finally:
        driver.quit()
    results["ok"] = all(v is True for v in checks.values())
    print(json.dumps(results), flush=True)
    sys.exit(0 if results["ok"] else 1)


main()
