"""The HTML explorer in a real headless Chromium, driven by Selenium."""
import os
import shutil

import pytest

import dcgraph
from dcgraph.views.explorer import to_html
from dcgraph.views.fold import fold
from dcgraph.views.graph import DisplayGraph
from views_cases import caller_mutates, geom

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-dev-shm-usage", "--window-size=1400,900"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium not installed (pip install selenium)")
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("no browser: install Debian's chromium and chromium-driver "
                    "(apt-get install -y chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def _marked(driver, selector):
    return sorted(int(x) for x in driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(el => el.dataset.id !== undefined ? el.dataset.id : el.id.slice(1))", selector))


def _click(browser, selector):
    """Scroll the element to the middle of its pane (as a reader would), then click it."""
    el = browser.find_element("css selector", selector)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", el)
    el.click()
    return el


def _open(browser, tape, path):
    to_html(tape, path, depth=None, max_nodes=None)
    browser.get(path.as_uri())
    graph = DisplayGraph(tape, fold(tape, depth=None, max_nodes=None))
    assert all(e.node is not None for e in graph.entries), "test tapes must not fold"
    return graph


def test_click_highlights_exactly_the_slice(browser, tmp_path):
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    graph = _open(browser, tape, tmp_path / "geom.html")
    target = tape.nodes[-2]           # 1 + geom(...) at the root
    ids = {id(e.node): e.id for e in graph.entries}
    expected = sorted(ids[id(n)] for n in tape.slice(target) if n.tape is not None)
    users = sorted(ids[id(n)] for n in tape.users(target))
    _click(browser, f"g.node#n{ids[id(target)]}")
    browser.save_screenshot(str(tmp_path / "explorer_slice.png"))
    assert (tmp_path / "explorer_slice.png").stat().st_size > 10_000
    assert _marked(browser, "g.node.dc-slice") == expected
    assert _marked(browser, ".dc-tree .dc-slice") == expected
    assert _marked(browser, "g.node.dc-user") == users == [ids[id(tape.nodes[-1])]]
    assert len(expected) < len(graph.entries)       # a slice, not everything


def test_click_in_tree_crosses_calls_and_search_filters(browser, tmp_path):
    _, tape = dcgraph.track(caller_mutates, 5)
    graph = _open(browser, tape, tmp_path / "mutates.html")
    ids = {id(e.node): e.id for e in graph.entries}
    target = tape.nodes[-2]           # items[0] + k: depends on the callee's append
    _click(browser, f'.dc-tree [data-id="{ids[id(target)]}"]')
    expected = sorted(ids[id(n)] for n in tape.slice(target) if n.tape is not None)
    assert _marked(browser, ".dc-tree .dc-slice") == expected
    assert any(graph.entries[i].node.tape is not tape for i in expected)
    search = browser.find_element("id", "dc-search")
    search.send_keys("push")
    visible = browser.execute_script(
        "return Array.from(document.querySelectorAll('.dc-tree li'))"
        ".filter(li => li.offsetParent !== null).map(li => li.querySelector('[data-id]').dataset.fn)")
    assert visible and all(fn == "push" for fn in visible)
    search.clear()
    search.send_keys("k")                # a variable's name: ``k = push(items, n)``
    visible = browser.execute_script(
        "return Array.from(document.querySelectorAll('.dc-tree li'))"
        ".filter(li => li.offsetParent !== null).map(li => li.querySelector('[data-id]').dataset.names)")
    assert visible == ["k"]
    search.clear()
    search.send_keys(" ")                # clears the filter (``clear`` sends no input event)
    hover = browser.find_element("css selector", f'.dc-tree [data-id="{ids[id(target)]}"]')
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))",
                           hover)
    info = browser.find_element("id", "dc-info").text
    assert "items[0] + k" in info and "views_cases.py:" in info
