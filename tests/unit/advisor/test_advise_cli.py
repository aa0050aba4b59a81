"""`ginkgodb advise` end to end on a data directory: text, JSON, and HTML rendered by headless
Chromium with its charts and findings."""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
import uuid

import pytest
from support.chromium import ensure_chromium

import ginkgodb


@pytest.fixture(scope="module")
def dbpath(tmp_path_factory):
    path = tmp_path_factory.mktemp("advise")
    client = ginkgodb.MongoClient(str(path))
    db = client.shop
    base = datetime.datetime(2024, 5, 9)
    db.events.insert_many([{"name": f"C{p}", "ts": base + datetime.timedelta(minutes=m), "a": 1.5}
                           for m in range(200) for p in range(10)])
    db.orders.insert_many([{"_id": str(uuid.uuid4()), "created": base + datetime.timedelta(seconds=i),
                            "status": ["new", "paid"][i % 2], "name": f"n{i}"} for i in range(1500)])
    db.orders.create_index("status")
    db.orders.create_index([("status", 1), ("created", 1)])
    db.orders.create_index("created")
    for i in range(30):
        list(db.orders.find({"name": f"n{i}"}))
    client.close()
    return str(path)


def _advise(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from ginkgodb.cli import main; sys.exit(main())",
                           "advise", *args], capture_output=True, text=True, timeout=300)


def test_json_report(dbpath):
    out = _advise("--dbpath", dbpath, "--format", "json", "--shard-key", "shop.orders:created",
                  "--shard-key", "shop.orders:status")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    rules = {(f["rule"], f["namespace"]) for f in report["findings"]}
    assert {("bucket-candidate", "shop.events"), ("random-id", "shop.orders"), ("redundant-index", "shop.orders"),
            ("missing-index", "shop.orders"), ("unused-index", "shop.orders"),
            ("monotonic-shard-key", "shop.orders"), ("jumbo-chunk-risk", "shop.orders")} <= rules
    severities = [f["severity"] for f in report["findings"]]
    assert severities == sorted(severities, key=["high", "medium", "low", "info"].index)
    assert {c["namespace"] for c in report["collections"]} == {"shop.events", "shop.orders"}
    assert report["shardKeys"][0]["analysis"]["keyCharacteristics"]["numDocsTotal"] == 1500
    assert report["queryShapes"][0]["execCount"] == 30


def test_text_report_and_bad_arguments(dbpath, tmp_path):
    out = _advise("--dbpath", dbpath, "--db", "shop", "--collection", "events", "--out", str(tmp_path / "r.txt"))
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "r.txt").read_text()
    assert "bucket-candidate" in text and "shop.orders" not in text
    assert "\x1b[" not in text
    bad = _advise("--dbpath", dbpath, "--shard-key", "nonsense")
    assert bad.returncode != 0 and "--shard-key" in bad.stderr


def test_html_report_renders_in_chromium(dbpath, tmp_path):
    page = tmp_path / "report.html"
    out = _advise("--dbpath", dbpath, "--format", "html", "--out", str(page), "--shard-key", "shop.orders:created")
    assert out.returncode == 0, out.stderr
    html = page.read_text()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "<script" not in html
    browser = str(ensure_chromium())   # installed on first use (skips with the reason when it cannot be)
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or "<svg" not in run.stdout:
        pytest.skip(f"Chromium could not render pages here: {run.stderr.strip()[:200]}")
    dom = run.stdout
    for chart in ("size-histogram", "index-sizes", "query-costs", "shard-distribution"):
        assert f'data-chart="{chart}"' in dom, chart
    assert dom.count('class="bar"') > 10
    for rule in ("bucket-candidate", "missing-index", "monotonic-shard-key"):
        assert f'data-rule="{rule}"' in dom
    shot = tmp_path / "report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1000,2000", page.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000


def test_over_the_wire_with_pymongo(tmp_path):
    """--uri: the same report through pymongo against a running server."""
    import pymongo

    from ginkgodb.server.testing import running_server
    with running_server() as (host, port):
        client = pymongo.MongoClient(host, port)
        coll = client.shop.orders
        coll.insert_many([{"_id": str(uuid.uuid4()), "name": f"n{i}"} for i in range(300)])
        for i in range(15):
            list(coll.find({"name": f"n{i}"}))
        client.close()
        out = _advise("--uri", f"mongodb://{host}:{port}", "--db", "shop", "--format", "json")
    assert out.returncode == 0, out.stderr
    rules = {f["rule"] for f in json.loads(out.stdout)["findings"]}
    assert {"random-id", "missing-index"} <= rules
