"""Beanie (PyPI; async over pymongo's AsyncMongoClient, which Beanie 2 uses) against `ginkgodb
serve`: documents with `Link`s, indexes declared in `Settings` and built by `init_beanie`,
find queries, update operators, aggregations, revisions, and validation / duplicate-key errors.

No `from __future__ import annotations` here: Beanie inspects the models' evaluated annotations,
and with postponed ones it misses BackLink fields."""
import asyncio
import datetime
import decimal
import uuid
from typing import Annotated, Optional

import pytest

pytest.importorskip("beanie", reason="beanie is in the test extra")
from beanie import (  # noqa: E402
    BackLink,
    BulkWriter,
    DecimalAnnotation,
    DeleteRules,
    Document,
    Indexed,
    Link,
    PydanticObjectId,
    UpdateResponse,
    View,
    WriteRules,
    init_beanie,
)
from beanie.exceptions import DocumentNotFound, RevisionIdWasChanged  # noqa: E402
from beanie.operators import AddToSet, ElemMatch, In, Inc, Or, Pull, Push, RegEx, Set  # noqa: E402
from bson import DBRef, Decimal128  # noqa: E402
from pydantic import BaseModel, Field, ValidationError  # noqa: E402
from pymongo import ASCENDING, DESCENDING, AsyncMongoClient, IndexModel  # noqa: E402
from pymongo.errors import BulkWriteError, DuplicateKeyError  # noqa: E402

pytestmark = pytest.mark.slow

DB = "e2e_beanie"


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class Author(Document):
    name: Annotated[str, Indexed(unique=True)]
    age: int = Field(ge=0)
    country: Optional[str] = None

    class Settings:
        name = "authors"
        validate_on_save = True
        indexes = [IndexModel([("country", ASCENDING), ("age", DESCENDING)], name="country_age")]


class Chapter(BaseModel):
    title: str
    words: int


class Book(Document):
    title: str
    author: Link[Author]
    reviewers: list[Link[Author]] = []
    tags: list[str] = []
    chapters: list[Chapter] = []
    pages: int = Field(default=0, ge=0)
    created: datetime.datetime = Field(default_factory=utcnow)

    class Settings:
        name = "books"
        use_revision = True
        use_state_management = True
        indexes = ["tags",
                   IndexModel([("created", ASCENDING)], expireAfterSeconds=3600, name="ttl_created")]


class Publisher(Document):
    """Kept apart from Author: fetching any document whose model has a BackLink runs $lookup."""
    name: str
    imprints: list[BackLink["Imprint"]] = Field(default=[], json_schema_extra={"original_field": "publisher"})


class Imprint(Document):
    name: str
    publisher: Link[Publisher]


class Vehicle(Document):
    color: str

    class Settings:
        name = "vehicles"
        is_root = True  # subclasses share the collection, told apart by _class_id


class Car(Vehicle):
    doors: int = 4


class Bike(Vehicle):
    gears: int = 1


class Item(Document):
    name: str
    price: DecimalAnnotation
    uid: uuid.UUID = Field(default_factory=uuid.uuid4)
    day: datetime.date = datetime.date(2024, 2, 29)
    note: Optional[str] = None
    qty: int = 0

    class Settings:
        name = "items"
        keep_nulls = False


class Expensive(View):
    name: str
    price: DecimalAnnotation

    class Settings:
        source = Item
        pipeline = [{"$match": {"price": {"$gt": 10}}}, {"$project": {"name": 1, "price": 1}}]


MODELS = [Author, Book, Publisher, Imprint, Vehicle, Car, Bike, Item, Expensive]


class TitlePages(BaseModel):
    title: str
    pages: int


def run(body, server_uri):
    """Run `body(db)` on a fresh database with the models initialised, as an application does
    at start-up."""
    async def main():
        client = AsyncMongoClient(server_uri, serverSelectionTimeoutMS=5000,
                                  uuidRepresentation="standard")
        try:
            await client.drop_database(DB)
            await init_beanie(database=client[DB], document_models=MODELS, recreate_views=True)
            return await body(client[DB])
        finally:
            await client.drop_database(DB)
            await client.close()
    return asyncio.run(main())


async def seed():
    ann = await Author(name="ann", age=30, country="fr").insert()
    bob = await Author(name="bob", age=40, country="de").insert()
    cy = await Author(name="cy", age=22, country="fr").insert()
    await Book(title="alpha", author=ann, reviewers=[bob, cy], tags=["x", "y"], pages=100,
               chapters=[Chapter(title="one", words=10), Chapter(title="two", words=20)]).insert()
    await Book(title="beta", author=bob, reviewers=[ann], tags=["y"], pages=200).insert()
    await Book(title="gamma", author=ann, tags=["z"], pages=50).insert()
    return ann, bob, cy


def test_indexes_built_by_init_beanie(server_uri):
    async def body(db):
        return await db.authors.index_information(), await db.books.index_information()
    authors, books = run(body, server_uri)
    assert authors["name_1"]["unique"] is True
    assert authors["country_age"]["key"] == [("country", 1), ("age", -1)]
    assert books["ttl_created"] == {"v": 2, "key": [("created", 1)], "expireAfterSeconds": 3600}
    assert books["tags_1"]["key"] == [("tags", 1)]


def test_links_stored_as_dbrefs_and_fetched_on_demand(server_uri):
    async def body(db):
        ann, bob, _ = await seed()
        raw = await db.books.find_one({"title": "alpha"})
        book = await Book.find_one(Book.title == "alpha")
        unfetched = type(book.author).__name__
        await book.fetch_link(Book.author)
        beta = await Book.find_one(Book.title == "beta")
        await beta.fetch_all_links()
        by_link = await Book.find(Book.author.id == ann.id).sort(+Book.title).to_list()
        return (raw, ann, bob, unfetched, book.author.name, beta.author.name,
                [r.name for r in beta.reviewers], [b.title for b in by_link])
    raw, ann, bob, unfetched, author, beta_author, beta_reviewers, by_link = run(body, server_uri)
    assert raw["author"] == DBRef("authors", ann.id)
    assert raw["reviewers"][0] == DBRef("authors", bob.id)
    assert unfetched == "Link"
    assert (author, beta_author, beta_reviewers) == ("ann", "bob", ["ann"])
    assert by_link == ["alpha", "gamma"]  # a filter on the link's $id


def test_write_rule_inserts_linked_documents(server_uri):
    async def body(db):
        dee = Author(name="dee", age=50)  # not saved yet: WriteRules.WRITE inserts it too
        book = await Book(title="delta", author=dee).insert(link_rule=WriteRules.WRITE)
        stored = await db.books.find_one({"_id": book.id})
        return await Author.find_one(Author.name == "dee"), stored["author"]
    dee, link = run(body, server_uri)
    assert dee is not None and link == DBRef("authors", dee.id)


def test_delete_rule_deletes_fetched_links(server_uri):
    async def body(db):
        dee = await Author(name="dee", age=50).insert()
        book = await Book(title="delta", author=dee).insert()
        loaded = await Book.get(book.id, fetch_links=True)
        await loaded.delete(link_rule=DeleteRules.DELETE_LINKS)
        return await Author.count(), await Book.count()
    assert run(body, server_uri) == (0, 0)


def test_fetch_links_on_find(server_uri):
    async def body(db):
        await seed()
        found = await Book.find(Book.title == "alpha", fetch_links=True).to_list()
        by_author_name = await Book.find(Book.author.name == "ann", fetch_links=True).count()
        return found[0].author.name, [r.name for r in found[0].reviewers], by_author_name
    assert run(body, server_uri) == ("ann", ["bob", "cy"], 2)


def test_back_links(server_uri):
    async def body(db):
        house = await Publisher(name="house").insert()
        for name in ("one", "two"):
            await Imprint(name=name, publisher=house).insert()
        found = await Publisher.find_one(Publisher.name == "house", fetch_links=True)
        return sorted(i.name for i in found.imprints)
    assert run(body, server_uri) == ["one", "two"]


def test_find_queries(server_uri):
    async def body(db):
        await seed()
        q = {}
        q["sorted"] = [b.title for b in await Book.find().sort(-Book.pages).skip(1).limit(1).to_list()]
        q["in"] = await Book.find(In(Book.tags, ["z", "x"])).count()
        q["regex"] = [b.title for b in await Book.find(RegEx(Book.title, "^(al|be)")).sort("title").to_list()]
        q["range"] = await Book.find(Book.pages >= 60, Book.pages <= 250).count()
        q["or"] = await Book.find(Or(Book.pages > 150, Book.tags == "z")).count()
        q["elemMatch"] = await Book.find(ElemMatch(Book.chapters, {"words": {"$gt": 15}})).count()
        q["projection"] = await Book.find(Book.pages > 60).sort("pages").project(TitlePages).to_list()
        q["distinct"] = sorted(await Book.distinct("tags"))
        q["count"] = await Book.count()
        q["first"] = (await Book.find_one(Book.tags == "y", sort=[("pages", DESCENDING)])).title
        q["all"] = len(await Book.find_all().to_list())
        q["sum"] = await Book.find().sum(Book.pages)
        q["avg"] = await Book.find(Book.author.id == (await Author.find_one(Author.name == "ann")).id).avg(Book.pages)
        q["max"] = await Book.find().max(Book.pages)
        q["min"] = await Book.find().min(Book.pages)
        return q
    q = run(body, server_uri)
    assert q["sorted"] == ["alpha"] and q["in"] == 2 and q["regex"] == ["alpha", "beta"]
    assert q["range"] == 2 and q["or"] == 2 and q["elemMatch"] == 1
    assert q["projection"] == [TitlePages(title="alpha", pages=100), TitlePages(title="beta", pages=200)]
    assert q["distinct"] == ["x", "y", "z"] and q["count"] == 3 and q["all"] == 3
    assert q["first"] == "beta"
    assert (q["sum"], q["avg"], q["max"], q["min"]) == (350, 75, 200, 50)


def test_aggregation(server_uri):
    class TagCount(BaseModel):
        id: str = Field(alias="_id")
        n: int

    async def body(db):
        await seed()
        tags = await Book.find(Book.pages >= 60).aggregate(
            [{"$unwind": "$tags"}, {"$group": {"_id": "$tags", "n": {"$sum": 1}}},
             {"$sort": {"_id": 1}}], projection_model=TagCount).to_list()
        per_country = await Author.aggregate(
            [{"$group": {"_id": "$country", "ages": {"$sum": "$age"}}}, {"$sort": {"_id": 1}}]).to_list()
        return tags, per_country
    tags, per_country = run(body, server_uri)
    assert [(t.id, t.n) for t in tags] == [("x", 1), ("y", 2)]
    assert per_country == [{"_id": "de", "ages": 40}, {"_id": "fr", "ages": 52}]


def test_update_operators_and_upserts(server_uri):
    async def body(db):
        await seed()
        alpha = Book.find_one(Book.title == "alpha")
        await alpha.update(Inc({Book.pages: 5}), Push({Book.tags: "w"}))
        await alpha.update(Pull({Book.tags: "x"}))
        await alpha.update(AddToSet({Book.tags: "y"}))  # present already: not added twice
        await Book.find(Book.pages < 150).update(Set({"status": "short"}))
        await db.books.update_one({"title": "alpha", "chapters.title": "two"},
                                  {"$inc": {"chapters.$.words": 5}})
        after = await db.books.find_one({"title": "alpha"})
        newest = await Book.find_one(Book.title == "beta").update(
            Inc({Book.pages: 1}), response_type=UpdateResponse.NEW_DOCUMENT)
        upserted = await Author.find_one(Author.name == "eve").upsert(
            Inc({Author.age: 1}), on_insert=Author(name="eve", age=18))
        again = await Author.find_one(Author.name == "eve").upsert(
            Inc({Author.age: 1}), on_insert=Author(name="eve", age=18))
        eve = await Author.find_one(Author.name == "eve")
        cy = await Author.find_one(Author.name == "cy")
        await cy.set({Author.age: 23})
        await cy.inc({Author.age: 1})
        stored_cy = await db.authors.find_one({"name": "cy"})
        return after, newest.pages, upserted.age, again, eve.age, stored_cy["age"]
    after, newest_pages, upserted_age, again, eve_age, cy_age = run(body, server_uri)
    assert after["pages"] == 105 and after["tags"] == ["y", "w"] and after["status"] == "short"
    assert [c["words"] for c in after["chapters"]] == [10, 25]
    assert newest_pages == 201  # find_one_and_update returning the new document
    assert upserted_age == 18 and eve_age == 19  # inserted once, then incremented
    assert cy_age == 24


def test_state_management_and_revisions(server_uri):
    async def body(db):
        await seed()
        book = await Book.find_one(Book.title == "gamma")
        book.pages = 60
        await book.save_changes()  # only the changed field is sent
        first = await Book.get(book.id)
        second = await Book.get(book.id)
        first.title = "gamma-1"
        await first.save()
        second.title = "gamma-2"
        outcomes = []
        for write in (second.save, second.replace):
            try:
                await write()
                outcomes.append("written")
            except RevisionIdWasChanged:
                outcomes.append("RevisionIdWasChanged")
        try:
            await Author(id=PydanticObjectId(), name="ghost", age=1).replace()
        except DocumentNotFound:
            outcomes.append("DocumentNotFound")
        stored = await db.books.find_one({"_id": book.id})
        return outcomes, stored["title"], stored["pages"]
    outcomes, title, pages = run(body, server_uri)
    assert outcomes == ["RevisionIdWasChanged", "RevisionIdWasChanged", "DocumentNotFound"]
    assert (title, pages) == ("gamma-1", 60)


def test_validation_errors(server_uri):
    with pytest.raises(ValidationError) as info:
        Author(name="x", age=-1)
    assert [e["loc"] for e in info.value.errors()] == [("age",)]

    async def body(db):
        await seed()
        ann = await Author.find_one(Author.name == "ann")
        ann.age = -5  # validate_on_save: refused before anything is sent
        try:
            await ann.save()
        except ValidationError as e:
            refused = [err["loc"] for err in e.errors()]
        return refused, (await db.authors.find_one({"name": "ann"}))["age"]
    assert run(body, server_uri) == ([("age",)], 30)


def test_duplicate_key_errors(server_uri):
    async def body(db):
        await seed()
        outcomes = {}
        try:
            await Author(name="ann", age=1).insert()
        except DuplicateKeyError as e:
            outcomes["insert"] = (e.code, e.details["keyValue"])
        try:
            await Author.insert_many([Author(name="fay", age=1), Author(name="bob", age=1)])
        except BulkWriteError as e:
            outcomes["insert_many"] = (e.details["nInserted"], [w["code"] for w in e.details["writeErrors"]])
        try:
            await Author.find_one(Author.name == "cy").update(Set({Author.name: "ann"}))
        except DuplicateKeyError as e:
            outcomes["update"] = e.code
        outcomes["names"] = sorted(a.name for a in await Author.find_all().to_list())
        return outcomes
    out = run(body, server_uri)
    assert out["insert"] == (11000, {"name": "ann"})
    assert out["insert_many"] == (1, [11000])
    assert out["update"] == 11000
    assert out["names"] == ["ann", "bob", "cy", "fay"]


def test_inheritance_views_and_value_types(server_uri):
    async def body(db):
        await Car(color="red", doors=2).insert()
        await Bike(color="blue", gears=21).insert()
        await Vehicle(color="grey").insert()
        out = {"all": sorted(type(v).__name__ for v in await Vehicle.find_all(with_children=True).to_list()),
               "cars": [c.color for c in await Car.find_all().to_list()],
               "raw_car": await db.vehicles.find_one({"color": "red"}, {"_id": 0})}
        await Item.insert_many([Item(name="a", price=decimal.Decimal("5.50"), note="n"),
                                Item(name="b", price=decimal.Decimal("12.25")),
                                Item(name="c", price=decimal.Decimal("99.99"))])
        out["raw_item"] = await db.items.find_one({"name": "b"}, {"_id": 0, "uid": 0})
        first = await Item.find_one(Item.name == "a")
        out["by_uuid"] = await Item.find(Item.uid == first.uid).count()
        out["by_decimal"] = await Item.find(Item.price > decimal.Decimal("10")).count()
        out["view"] = [(e.name, e.price) for e in await Expensive.find_all().sort("name").to_list()]
        out["view_info"] = (await db.command("listCollections", filter={"name": "Expensive"}))["cursor"]["firstBatch"][0]
        return out
    out = run(body, server_uri)
    assert out["all"] == ["Bike", "Car", "Vehicle"] and out["cars"] == ["red"]
    assert out["raw_car"] == {"_class_id": "Vehicle.Car", "color": "red", "doors": 2}
    assert out["raw_item"] == {"name": "b", "price": Decimal128("12.25"),  # keep_nulls=False: no note
                               "day": datetime.datetime(2024, 2, 29), "qty": 0}
    assert out["by_uuid"] == 1 and out["by_decimal"] == 2
    assert out["view"] == [("b", decimal.Decimal("12.25")), ("c", decimal.Decimal("99.99"))]
    assert out["view_info"]["type"] == "view" and out["view_info"]["options"]["viewOn"] == "items"


def test_bulk_writer_and_query_deletes(server_uri):
    async def body(db):
        await Item.insert_many([Item(name=n, price=decimal.Decimal(p)) for n, p in
                                [("a", "1"), ("b", "2"), ("c", "3")]])
        async with BulkWriter() as writer:  # one bulk write on leaving the block
            await Item.find_one(Item.name == "a").update(Inc({Item.qty: 1}), bulk_writer=writer)
            await Item.insert_one(Item(name="d", price=decimal.Decimal("4")), bulk_writer=writer)
            await Item.find_one(Item.name == "b").update(Set({Item.note: "x"}), bulk_writer=writer)
        after_bulk = sorted((i.name, i.qty, i.note) for i in await Item.find_all().to_list())
        deleted = await Item.find(Item.price < decimal.Decimal("2.5")).delete()
        return after_bulk, deleted.deleted_count, sorted(i.name for i in await Item.find_all().to_list())
    after_bulk, deleted, left = run(body, server_uri)
    assert after_bulk == [("a", 1, None), ("b", 0, "x"), ("c", 0, None), ("d", 0, None)]
    assert deleted == 2 and left == ["c", "d"]


def test_bulk_writer_with_delete(server_uri):
    """Regression: delete refused bypassDocumentValidation (40415), which pymongo's bulk_write
    sends with deletes."""
    async def body(db):
        await Item.insert_many([Item(name=n, price=decimal.Decimal("1")) for n in "abc"])
        async with BulkWriter() as writer:
            await Item.find_one(Item.name == "a").update(Inc({Item.qty: 1}), bulk_writer=writer)
            await Item.find_one(Item.name == "c").delete(bulk_writer=writer)
        return sorted((i.name, i.qty) for i in await Item.find_all().to_list())
    assert run(body, server_uri) == [("a", 1), ("b", 0)]
