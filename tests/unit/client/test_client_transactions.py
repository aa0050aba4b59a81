

def test_conflicting_threads_back_off_and_all_commit(tmp_path, monkeypatch):
    """4 threads moving money between 3 accounts: with_transaction's retries pause (random, growing),
    every transfer commits once and the total is kept."""
    import threading

    from ginkgodb.client import session as session_module
    pauses: list[float] = []
    real_sleep = session_module.time.sleep
    workers: list = []   # the transfer threads: another thread's sleeps (a background service) are not pauses

    def sleep(seconds: float) -> None:
        if threading.current_thread() in workers:
            pauses.append(seconds)
        real_sleep(seconds)
    monkeypatch.setattr(session_module.time, "sleep", sleep)
    from ginkgodb import MongoClient
    client = MongoClient(str(tmp_path / "data"))
    coll = client.bank.accounts
    coll.insert_many([{"_id": i, "balance": 100} for i in range(3)])

    def transfers(seed: int) -> None:
        with client.start_session() as s:
            for n in range(30):
                src, dst = (seed + n) % 3, (seed + n + 1) % 3

                def move(s, src: int = src, dst: int = dst) -> None:
                    coll.update_one({"_id": src}, {"$inc": {"balance": -1}}, session=s)
                    coll.update_one({"_id": dst}, {"$inc": {"balance": 1}}, session=s)
                s.with_transaction(move)

    threads = [threading.Thread(target=transfers, args=(i,)) for i in range(4)]
    workers.extend(threads)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(d["balance"] for d in coll.find()) == 300
    assert all(0 <= p <= session_module.BACKOFF_CAP for p in pauses)


def test_start_transaction_as_a_context_manager_commits_or_aborts(tmp_path):
    """pymongo's `with session.start_transaction():` commits when the block ends and aborts when
    it raises; the session stays usable after either."""
    import pytest

    from ginkgodb import MongoClient
    client = MongoClient(str(tmp_path / "data"))
    coll = client.db.c
    with client.start_session() as s:
        with s.start_transaction():
            coll.insert_one({"_id": 1}, session=s)
            assert coll.find_one({"_id": 1}) is None          # not visible outside before commit
        assert not s.in_transaction
        assert coll.find_one({"_id": 1}) == {"_id": 1}
        with pytest.raises(ValueError):
            with s.start_transaction():
                coll.insert_one({"_id": 2}, session=s)
                raise ValueError("the block fails")
        assert not s.in_transaction
        assert coll.find_one({"_id": 2}) is None
        with s.start_transaction():                          # the same session, a new transaction
            coll.insert_one({"_id": 3}, session=s)
        assert not s.has_ended
    assert sorted(d["_id"] for d in coll.find()) == [1, 3]
