"""The console in headless chromium, through Selenium (run by scripts/browser-test).

Against a live `ledger serve` holding the demo data: a wrong key is refused and nothing is kept;
a reader key signs in; a user's timeline, unconsumed payments and subscriptions show what the API
answers when asked directly; moving the time slider changes a subscription's status; the
dashboard draws each of the five reports' charts. The key never appears in an address the
browser asked for, nor in localStorage or a cookie. Screenshots go to $CONSOLE_SHOTS.
"""
import datetime
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

URL = os.environ["CONSOLE_URL"]
KEY = os.environ["CONSOLE_READER_KEY"]
RELAY = os.environ["CONSOLE_RELAY_KEY"]
USER = os.environ["CONSOLE_USER"]
SHOTS = os.environ["CONSOLE_SHOTS"]
HOUR_MS = 3600 * 1000
REPORTS = ["revenue", "subscribers", "churn", "refunds", "backlog"]


def api(path):
    """The API asked directly, as the page asks it: (status, parsed JSON or None)."""
    request = urllib.request.Request(URL + path, headers={"Authorization": "Bearer " + KEY})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def iso(ms):
    """An instant as JavaScript's toISOString writes it."""
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def parse(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def browser():
    options = Options()
    options.binary_location = shutil.which("chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", "--force-device-scale-factor=1", "--lang=en-US"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def screenshot(driver, name):
    """The whole page, as tall as it is."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, max(1000, min(height + 40, 6000)))
    time.sleep(0.3)
    path = os.path.join(SHOTS, name)
    driver.save_screenshot(path)
    driver.set_window_size(1400, 1000)
    print("   screenshot", path)


class Check:
    def __init__(self):
        self.failures = []

    def __call__(self, condition, what):
        print(("   ok   " if condition else "   FAIL ") + what)
        if not condition:
            self.failures.append(what)


def main():
    check = Check()
    driver = browser()
    wait = WebDriverWait(driver, 60)
    started = time.monotonic()
    try:
        by_id = lambda name: driver.find_element(By.ID, name)
        driver.get(URL + "/console")
        wait.until(lambda d: by_id("login").is_displayed())
        check(driver.current_url == URL + "/console/", "/console redirects to /console/")

        print("== a wrong key is refused, and nothing is kept")
        for wrong, why in [("lk_" + "0" * 40, "an unknown key (401)"), (RELAY, "a notifications key (403)")]:
            by_id("key").send_keys(wrong)
            by_id("key").send_keys(Keys.ENTER)
            wait.until(lambda d: "Refused" in by_id("login-status").text)
            check(not by_id("app").is_displayed(), why + ": the console stays closed")
            check(driver.execute_script("return sessionStorage.length") == 0, why + ": sessionStorage is empty")
            check(by_id("key").get_attribute("value") == "", why + ": the field is cleared")
        screenshot(driver, "refused.png")

        print("== sign in with a reader key")
        by_id("key").send_keys(KEY)
        by_id("key").send_keys(Keys.ENTER)
        wait.until(lambda d: by_id("app").is_displayed())
        check(True, "the console opens")

        print("== look up user " + USER)
        by_id("search").send_keys(USER)
        by_id("search").send_keys(Keys.ENTER)
        wait.until(lambda d: by_id("user").is_displayed() and by_id("subscriptions").get_attribute("data-at"))
        check(by_id("user-id").text == USER, "the user's page shows their id")

        status, unconsumed = api("/v1/users/%s/unconsumed" % USER)
        rows = driver.find_elements(By.CSS_SELECTOR, "#unconsumed tbody tr")
        check(status == 200 and len(unconsumed) > 0, "the API has %d unconsumed payments" % len(unconsumed or []))
        check(len(rows) == len(unconsumed), "the page shows %d unconsumed payments" % len(rows))
        check(sorted(r.find_element(By.CSS_SELECTOR, "td").text for r in rows) == sorted(p["paymentSeq"] for p in unconsumed),
              "the same payments")

        status, history = api("/v1/users/%s/history" % USER)
        entries = driver.find_elements(By.CSS_SELECTOR, "#timeline li.event")
        if status == 200:
            check(len(entries) == len(history["entries"]) > 0, "the timeline shows the %d events the API answers" % len(entries))
        else:
            note = by_id("timeline-note").text
            check(status == 404 and "no timeline route" in note,
                  "no history route on this server (HTTP %d): the timeline says so" % status)

        print("== the time slider changes a subscription's status")
        origin = parse(by_id("at").get_attribute("data-origin"))
        steps = int(by_id("at").get_attribute("max"))
        _, lineages = api("/v1/users/%s/subscriptions?includeExpired=true" % USER)
        chosen = None
        for lineage in lineages:
            if not lineage.get("expiryTime"):
                continue
            end = (parse(lineage["expiryTime"]) - origin) // HOUR_MS
            before, after = end - 2, end + 2
            if not (1 <= before and after <= steps):
                continue
            states = []
            for step in (before, after):
                _, answer = api("/v1/users/%s/subscriptions?includeExpired=true&at=%s" % (USER, iso(origin + step * HOUR_MS)))
                states.append(next((s["status"] for s in answer if s["originalTransactionId"] == lineage["originalTransactionId"]
                                    and s["storeCode"] == lineage["storeCode"]), None))
            if states[0] and states[1] and states[0] != states[1]:
                chosen = (lineage, before, after, states)
                break
        check(chosen is not None, "the API has a lineage whose status changes within the slider's span")
        if chosen:
            lineage, before, after, states = chosen
            row = "tr[data-lineage='%s:%s'] td.status-cell" % (lineage["storeCode"], lineage["originalTransactionId"])
            slider = by_id("at")

            def move(step):
                # One step short by script, the last by the keyboard, as a person would.
                driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                                      slider, str(step - 1))
                slider.send_keys(Keys.ARROW_RIGHT)
                at = iso(origin + step * HOUR_MS)
                wait.until(lambda d: by_id("subscriptions").get_attribute("data-at") == at)
                return driver.find_element(By.CSS_SELECTOR, row).text, at

            seen_before, at_before = move(before)
            check(seen_before == states[0], "at %s the page says %s (the API: %s)" % (at_before, seen_before, states[0]))
            seen_after, at_after = move(after)
            check(seen_after == states[1], "at %s the page says %s (the API: %s)" % (at_after, seen_after, states[1]))
            check(seen_before != seen_after, "moving the slider changed the status: %s -> %s" % (seen_before, seen_after))
            move(before)
        driver.execute_script("window.scrollTo(0, 0)")
        screenshot(driver, "customer.png")

        print("== the dashboard")
        by_id("tab-dashboard").click()
        figures = lambda: driver.find_elements(By.CSS_SELECTOR, "figure.chart")

        def drawn(d):
            states = [f.get_attribute("data-state") for f in figures()]
            return all(s in ("drawn", "failed") for s in states) and states

        def check_charts(how):
            wait.until(drawn)
            for figure in figures():
                report = figure.get_attribute("data-report")
                points = driver.execute_script("""
                    const svg = arguments[0].querySelector('svg');
                    if (!svg) return 0;
                    const lines = [...svg.querySelectorAll('polyline')].filter(p => p.getAttribute('points').trim().split(' ').length > 1);
                    return lines.length + svg.querySelectorAll('g.series circle').length;""", figure)
                check(figure.get_attribute("data-state") == "drawn" and points > 0,
                      "%s: the %s chart is drawn (%d lines and points)" % (how, report, points))

        check_charts("by month, the default range")
        today = datetime.datetime.now(datetime.timezone.utc)
        first = datetime.date(today.year - (1 if today.month < 12 else 0), (today.month % 12) + 1, 1)
        check(by_id("from").get_attribute("value") == first.isoformat() and by_id("by").get_attribute("value") == "month",
              "the default range is twelve months by month, from %s" % first)
        screenshot(driver, "dashboard.png")

        driver.execute_script("document.getElementById('from').value = '2026-03-01';"
                              "document.getElementById('to').value = '2026-05-01';")
        Select(by_id("by")).select_by_value("day")
        driver.execute_script("for (const f of document.querySelectorAll('figure.chart')) f.dataset.state = 'asked'")
        by_id("range-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        check_charts("by day, March and April")
        screenshot(driver, "dashboard-by-day.png")

        print("== the key stays out of addresses and storage")
        urls = []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        data = [u for u in urls if "/v1/" in u]
        check(len(data) >= len(REPORTS) + 4, "the browser asked %d data addresses" % len(data))
        check(all(KEY not in u and "lk_" not in u for u in urls), "no address holds a key (%d requests)" % len(urls))
        check(KEY not in driver.current_url, "the page's address holds no key")
        check(KEY not in driver.execute_script("return JSON.stringify(localStorage)"), "localStorage holds no key")
        check(all(KEY not in c.get("value", "") for c in driver.get_cookies()), "no cookie holds the key")
        check(driver.execute_script("return sessionStorage.getItem('ledger.console.key')") == KEY,
              "the key is in the tab's sessionStorage")
        srcs = driver.execute_script("return [...document.querySelectorAll('[src],[href]')].map(e => e.src || e.href)")
        check(all(KEY not in s for s in srcs), "no src or href holds the key")
        violations = [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]
        check(not violations, "the page breaks none of its Content-Security-Policy" + (": " + violations[0] if violations else ""))

        by_id("sign-out").click()
        check(driver.execute_script("return sessionStorage.length") == 0 and by_id("login").is_displayed(),
              "signing out drops the key")
    finally:
        driver.quit()
    print("== %d checks failed; %.1f s in the browser" % (len(check.failures), time.monotonic() - started))
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
