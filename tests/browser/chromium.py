"""Headless Chromium as the browser test sees the book: 1280 px wide, offline (every host name
resolves to nothing and the proxy is a closed port), Debian's chromium and chromedriver."""

from __future__ import annotations

import shutil

#: The window the test reads pages in: the book's text column is about 680 px wide there.
WINDOW = (1280, 1600)


def chromium(*, console_log: bool = False):
    """A Chrome WebDriver for headless, offline Chromium; ``console_log`` keeps the browser's
    console messages for ``get_log("browser")``."""
    driver_path, binary = shutil.which("chromedriver"), shutil.which("chromium")
    if not (driver_path and binary):
        raise RuntimeError("chromium and chromedriver are needed "
                           "(make test-browser installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}", "--allow-file-access-from-files",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                 "--proxy-bypass-list=<-loopback>", "--disable-background-networking",
                 "--hide-scrollbars"):
        options.add_argument(flag)
    if console_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    return driver


def wait_for_mathjax(driver) -> None:
    """Until MathJax's startup promise settles (pages without math settle at once)."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done(false); }"
        "else { MathJax.startup.promise.then(() => done(true), () => done(false)); }")
