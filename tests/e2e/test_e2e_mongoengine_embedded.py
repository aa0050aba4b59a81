"""MongoEngine on the embedded client: `connect(mongo_client_class=ginkgodb.MongoClient, host=path)`
(MongoEngine passes a list of hosts and port 27017, which an embedded client accepts and ignores)."""
from __future__ import annotations

import pytest

import ginkgodb

me = pytest.importorskip("mongoengine")


class Book(me.Document):
    title = me.StringField(required=True, unique=True)
    qty = me.IntField(default=0)
    tags = me.ListField(me.StringField())


@pytest.fixture
def connected(tmp_path):
    me.connect("shop", host=str(tmp_path / "data"), mongo_client_class=ginkgodb.MongoClient, alias="default")
    yield tmp_path / "data"
    me.disconnect(alias="default")


def test_a_model_saves_queries_updates_and_enforces_uniqueness(connected):
    Book(title="SICP", qty=2, tags=["lisp"]).save()
    Book(title="TAOCP").save()
    assert Book.objects(qty__gte=1).count() == 1
    assert [b.title for b in Book.objects.order_by("-title")] == ["TAOCP", "SICP"]
    Book.objects(title="SICP").update_one(dec__qty=1, push__tags="classic")
    assert Book.objects.get(title="SICP").tags == ["lisp", "classic"]
    with pytest.raises(me.NotUniqueError):
        Book(title="SICP").save()
    assert Book.objects.count() == 2
    me.disconnect(alias="default")
    assert ginkgodb.MongoClient(str(connected)).shop.book.count_documents({}) == 2  # durable on disk
