"""mongo-express (the web GUI, from npm) against `ginkgodb serve`, driven in headless Debian
Chromium through playwright-core: databases, collections, a collection's documents and indexes,
adding, viewing, editing and deleting a document, simple, advanced and aggregation queries,
exports, creating an index, renaming and deleting a collection.
Every page must load without a server error; a PNG of each page is kept under the pytest tmp dir
and its path printed."""
from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pymongo
import pytest
from e2e.npm_tools import run_json_script
from support.chromium import ensure_chromium

pytestmark = pytest.mark.slow

DB = "e2e_gui"
COLLECTION = "products"
START_TIMEOUT = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MongoExpress:
    """A mongo-express process on a free loopback port; its request log is kept for the checks."""

    def __init__(self, modules: Path, server_uri: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "ME_CONFIG_MONGODB_URL": server_uri,
               "ME_CONFIG_MONGODB_ENABLE_ADMIN": "true",  # list every database
               "ME_CONFIG_BASICAUTH_USERNAME": "",        # no login form in the way
               "ME_CONFIG_SITE_COOKIESECRET": secrets.token_hex(16),
               "ME_CONFIG_SITE_SESSIONSECRET": secrets.token_hex(16),
               "PORT": str(self.port), "VCAP_APP_HOST": "127.0.0.1", "NODE_ENV": "production"}
        app = modules / "mongo-express" / "app.js"
        self.proc = subprocess.Popen(["node", str(app)], cwd=app.parent, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.append(line.rstrip())

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail("mongo-express exited at start:\n" + "\n".join(self.log[-30:]))
            try:
                with urllib.request.urlopen(self.url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        log = "\n".join(self.log[-30:])
        pytest.fail(f"mongo-express did not answer within {START_TIMEOUT}s:\n{log}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def server_errors(self) -> list[str]:
        """Request-log lines (morgan's `dev` format) with a 5xx status."""
        plain = (re.sub(r"\x1b\[[0-9;]*m", "", line) for line in self.log)
        return [line for line in plain if re.match(r"^(GET|POST|PUT|DELETE) \S+ 5\d\d ", line)]


@pytest.fixture(scope="module")
def seeded(server_address):
    with pymongo.MongoClient(*server_address) as c:
        c.drop_database(DB)
        products = c[DB][COLLECTION]
        products.insert_many([{"name": f"p{i}", "price": i * 1.5, "tags": ["a", "b"][: i % 3]}
                              for i in range(25)])
        products.create_index("name", unique=True)
        products.create_index([("price", -1), ("name", 1)], name="price_name")
        c[DB].orders.insert_one({"product": "p1", "qty": 2})
        yield c[DB]
        c.drop_database(DB)


@pytest.fixture(scope="module")
def mongo_express(gui_modules, server_uri, seeded):
    ensure_chromium()  # skip before starting anything when there is no browser
    app = MongoExpress(gui_modules, server_uri)
    try:
        app.wait_ready()
        yield app
    finally:
        app.stop()


@pytest.fixture(scope="module")
def browser_run(mongo_express, gui_modules, tmp_path_factory) -> dict:
    """One walk through mongo-express in Chromium; the tests below assert on what it saw."""
    shots = tmp_path_factory.mktemp("mongo-express-screenshots")
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh --user-data-dir
    out = run_json_script(gui_modules, "mongo_express_browser.js", mongo_express.url, DB,
                          COLLECTION, "orders", "p3", str(shots), str(profile), timeout=180)
    out["compactScreenshot"] = str(next(shots.glob("*-compact.png")))
    return out


def test_mongo_express_pages_in_chromium(browser_run, mongo_express, seeded, capsys):
    pages, checks = browser_run["pages"], browser_run["checks"]
    with capsys.disabled():  # shown in the test output whether or not it passes
        print("\nmongo-express screenshots:")
        for page in pages:
            print(f"  {page['name']:<18} {page['screenshot']}")
        print(f"  {'compact':<18} {browser_run['compactScreenshot']}")

    for page in pages:
        assert page["status"] == 200, page
        assert page["errorText"] is None, page
        assert page["flashError"] == [], page
        assert " - Mongo Express" in page["title"], page
        assert Path(page["screenshot"]).stat().st_size > 10_000, page  # a rendered PNG
    assert [p["name"] for p in pages] == [
        "databases", "collections", "collection", "indexes", "document-added", "simple-query",
        "document-view", "document-saved", "advanced-query", "aggregate-query", "document-deleted",
        "index-added", "collection-renamed", "collection-deleted"]
    assert mongo_express.server_errors() == []
    assert checks["consoleErrors"] == []

    assert checks["databaseListed"] and checks["collectionListed"]
    assert checks["rowsShown"] == 10  # the first page of 25 documents
    assert checks["indexes"] == ["_id_", "name_1", "price_name"]
    assert "unique: true" in checks["indexAttributes"][1]
    assert checks["addedFlash"] == ["Document added!"]
    assert checks["simpleQueryRows"] == 1 and checks["documentShown"]
    assert checks["savedFlash"] == ["Document updated!"]
    assert checks["advancedRows"] == 5  # price >= 30: p20..p24
    assert checks["advancedColumns"] == ["name"]  # the projection applied
    assert checks["aggregateNames"] == ["p23", "p20", "p17", "p14", "p11", "p8", "p5", "p2"]
    assert checks["aggregateTotal"] == "Delete all 8 documents retrieved"  # from $facet $count
    for kind in ("export", "expArr", "expCsv"):
        assert checks[kind]["status"] == 200, checks[kind]
    assert checks["export"]["lines"] == 26  # one JSON document a line
    assert checks["expCsv"]["lines"] == 27  # a header and a row per document
    assert checks["deletedFlash"][0].startswith("Document deleted!")
    assert checks["indexesAfterAdd"] == ["_id_", "name_1", "price_name", "tags_1_price_-1"]

    # what the browser did is in the database
    added = seeded[COLLECTION].find_one({"name": "added-in-browser"}, {"_id": 0})
    assert added == {"name": "added-in-browser", "price": 8.25, "tags": ["gui", "edited"]}
    assert seeded[COLLECTION].find_one({"name": "p3"}) is None
    assert seeded[COLLECTION].count_documents({}) == 25
    assert "tags_1_price_-1" in seeded[COLLECTION].index_information()
    assert checks["renamedFlash"] == ["Collection renamed!"]
    assert checks["collectionDeletedFlash"] == ['Collection "orders_renamed" deleted!']
    assert seeded.list_collection_names() == [COLLECTION]


def test_mongo_express_compact_button(browser_run):
    compact = browser_run["checks"]["compact"]
    assert compact["status"] == 200
    assert compact["error"] == [] and compact["success"] == ["Collection compacted!"], compact
