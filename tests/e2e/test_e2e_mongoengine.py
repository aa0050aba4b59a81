"""MongoEngine (PyPI) against `ginkgodb serve`, as an application uses it: documents with
references (ReferenceField, LazyReferenceField, DBRef and generic references, delete rules),
indexes declared in `meta`, query sets, atomic updates, aggregation helpers, FileField on GridFS,
and validation / duplicate-key errors as MongoEngine's exceptions."""
from __future__ import annotations

import datetime
import decimal
import io
import uuid

import pytest
from bson import DBRef

me = pytest.importorskip("mongoengine", reason="mongoengine is in the test extra")
from mongoengine import (  # noqa: E402
    CASCADE,
    DENY,
    NULLIFY,
    PULL,
    BinaryField,
    ComplexDateTimeField,
    DateTimeField,
    DecimalField,
    DictField,
    Document,
    EmailField,
    EmbeddedDocument,
    EmbeddedDocumentField,
    EmbeddedDocumentListField,
    FileField,
    GenericReferenceField,
    IntField,
    LazyReferenceField,
    ListField,
    MapField,
    ReferenceField,
    SequenceField,
    SortedListField,
    StringField,
    URLField,
    UUIDField,
)
from mongoengine.context_managers import query_counter, switch_collection, switch_db  # noqa: E402
from mongoengine.errors import (  # noqa: E402
    BulkWriteError,
    DoesNotExist,
    MultipleObjectsReturned,
    NotUniqueError,
    OperationError,
    ValidationError,
)
from mongoengine.queryset.visitor import Q  # noqa: E402

pytestmark = pytest.mark.slow

DB = "e2e_mongoengine"


class Author(Document):
    name = StringField(required=True, max_length=40, unique=True)
    email = EmailField()
    age = IntField(min_value=0)
    country = StringField(choices=("fr", "de", "it"))
    site = URLField()
    meta = {"indexes": [{"fields": ["country", "-age"], "name": "country_age"}]}


class Comment(EmbeddedDocument):
    text = StringField()
    votes = IntField(default=0)


class Post(Document):
    title = StringField(required=True)
    slug = StringField(regex=r"^[a-z0-9-]+$", unique_with="section")
    section = StringField(default="main")
    author = ReferenceField(Author, reverse_delete_rule=CASCADE)
    editor = LazyReferenceField(Author, reverse_delete_rule=NULLIFY)
    reviewer = ReferenceField(Author, dbref=True)
    readers = ListField(ReferenceField(Author, reverse_delete_rule=PULL))
    tags = ListField(StringField())
    comments = ListField(EmbeddedDocumentField(Comment))
    extra = DictField()
    views = IntField(default=0)
    created = DateTimeField(default=lambda: datetime.datetime.now(datetime.UTC).replace(tzinfo=None))
    attachment = FileField(collection_name="attachments")
    meta = {
        "ordering": ["-views"],
        "indexes": [
            "tags",
            ("author", "-views"),
            {"fields": ["created"], "expireAfterSeconds": 3600},
            {"fields": ["#section"]},
            {"fields": ["extra.k"], "sparse": True},
            {"fields": ["views"], "partialFilterExpression": {"views": {"$gt": 100}}},
        ],
    }


class Bookmark(Document):
    owner = GenericReferenceField()
    pinned = ReferenceField(Post, reverse_delete_rule=DENY)


class Event(Document):
    i = IntField()
    meta = {"max_documents": 3, "max_size": 4096}  # a capped collection


class Animal(Document):
    name = StringField()
    meta = {"allow_inheritance": True, "indexes": ["name"]}


class Dog(Animal):
    bark = StringField()


class Cat(Animal):
    lives = IntField(default=9)


class Ledger(Document):
    number = SequenceField()
    amount = DecimalField(precision=2)
    uid = UUIDField(binary=True)
    blob = BinaryField()
    when = ComplexDateTimeField()
    labels = SortedListField(StringField())
    counts = MapField(IntField())


class Line(EmbeddedDocument):
    sku = StringField()
    qty = IntField()


class Cart(Document):
    lines = EmbeddedDocumentListField(Line)


class Employee(Document):
    name = StringField()
    boss = StringField()


MODELS = (Author, Post, Bookmark, Event, Animal, Ledger, Cart, Employee)
OTHER_DB = DB + "_other"


@pytest.fixture(scope="module")
def connection(server_uri):
    me.connect(db=DB, host=server_uri, serverSelectionTimeoutMS=5000, uuidRepresentation="standard")
    me.register_connection("other", db=OTHER_DB, host=server_uri, uuidRepresentation="standard")
    yield me.connection.get_db()
    me.connection.get_db().client.drop_database(DB)
    me.connection.get_db().client.drop_database(OTHER_DB)
    me.disconnect_all()


@pytest.fixture
def mdb(connection):
    """An empty database for each test; models forget their collection so that MongoEngine
    creates the declared indexes again on first use, as at application start-up."""
    connection.client.drop_database(DB)
    connection.client.drop_database(OTHER_DB)
    for model in MODELS:
        model._collection = None
    return connection


@pytest.fixture
def people(mdb):
    ann = Author(name="ann", email="ann@example.com", age=30, country="fr").save()
    bob = Author(name="bob", age=40, country="de").save()
    cy = Author(name="cy", age=22, country="fr").save()
    return ann, bob, cy


@pytest.fixture
def posts(people):
    ann, bob, cy = people
    hello = Post(title="hello", slug="hello", author=ann, editor=bob, reviewer=bob,
                 readers=[bob, cy], tags=["x", "y"], comments=[Comment(text="c1")],
                 extra={"k": 1}).save()
    second = Post(title="second", slug="second", author=bob, tags=["y"], views=5).save()
    third = Post(title="third", slug="third", author=ann, tags=["z"], views=2).save()
    return hello, second, third


def index_map(model) -> dict:
    return model._get_collection().index_information()


def test_declared_indexes_created_on_first_use(mdb):
    Author.objects.first()  # first use of the collection builds meta's indexes
    authors = index_map(Author)
    assert authors["name_1"]["unique"] is True
    assert authors["country_age"]["key"] == [("country", 1), ("age", -1)]
    posts = index_map(Post)
    assert posts["created_1"]["expireAfterSeconds"] == 3600
    assert posts["author_1_views_-1"]["key"] == [("author", 1), ("views", -1)]
    assert posts["section_hashed"]["key"] == [("section", "hashed")]
    assert posts["extra.k_1"]["sparse"] is True
    assert posts["views_1"]["partialFilterExpression"] == {"views": {"$gt": 100}}
    assert posts["slug_1_section_1"]["unique"] is True  # unique_with: a compound unique index
    assert Post.compare_indexes() == {"missing": [], "extra": []}
    Post.ensure_indexes()  # idempotent on a second run
    assert index_map(Post) == posts


def test_references_dereference(posts, people):
    ann, bob, cy = people
    raw = Post._get_collection().find_one({"title": "hello"})
    assert raw["author"] == ann.id and raw["editor"] == bob.id
    assert raw["reviewer"] == DBRef("author", bob.id)  # dbref=True stores a DBRef
    hello = Post.objects.get(title="hello")
    assert hello.author.name == "ann"
    assert hello.editor.pk == bob.id and hello.editor.fetch().name == "bob"
    assert hello.reviewer.name == "bob"
    assert [r.name for r in hello.readers] == ["bob", "cy"]
    assert Post.objects(author=ann).count() == 2
    assert Post.objects(reviewer=bob).count() == 1  # a query on a DBRef field
    assert [p.author.name for p in Post.objects.order_by("title").select_related()] == \
        ["ann", "bob", "ann"]
    assert isinstance(Post.objects.no_dereference().get(title="hello").reviewer, DBRef)


def test_generic_reference_and_delete_rules(posts, people):
    ann, bob, cy = people
    hello = posts[0]
    mark = Bookmark(owner=cy, pinned=hello).save()
    assert Bookmark._get_collection().find_one()["owner"] == {"_cls": "Author",
                                                            "_ref": DBRef("author", cy.id)}
    assert Bookmark.objects.get(id=mark.id).owner.name == "cy"
    with pytest.raises(OperationError):  # DENY: a bookmark still points at the post
        hello.delete()
    mark.delete()
    bob.delete()  # PULL from the readers list, NULLIFY the editor reference
    hello = Post.objects.get(title="hello")
    assert [r.name for r in hello.readers] == ["cy"] and hello.editor is None
    ann.delete()  # CASCADE deletes ann's posts
    assert [p.title for p in Post.objects] == []


def test_query_sets(posts):
    titles = lambda qs: [p.title for p in qs]  # noqa: E731
    assert titles(Post.objects) == ["second", "third", "hello"]  # meta ordering -views
    assert titles(Post.objects.order_by("title")) == ["hello", "second", "third"]
    assert titles(Post.objects.order_by("views").skip(1).limit(1)) == ["third"]
    assert titles(Post.objects.order_by("views")[1:3]) == ["third", "second"]
    assert Post.objects.order_by("views").first().title == "hello"
    assert Post.objects(tags__in=["z", "x"]).count() == 2
    assert Post.objects(tags__nin=["y"], views__ne=0).count() == 1
    assert Post.objects(tags__all=["x", "y"]).count() == 1
    assert Post.objects(tags__size=2).count() == 1
    assert titles(Post.objects(title__startswith="he")) == ["hello"]
    assert titles(Post.objects(title__icontains="IRD")) == ["third"]
    assert titles(Post.objects(title__iexact="SECOND")) == ["second"]
    assert titles(Post.objects(__raw__={"title": {"$regex": "^(s|t)", "$options": "i"}})) == \
        ["second", "third"]
    assert Post.objects(Q(views__gte=5) | Q(tags="z")).count() == 2
    assert Post.objects(extra__k__exists=True).count() == 1
    assert Post.objects(comments__match={"text": "c1", "votes": 0}).count() == 1
    assert Post.objects(views__gte=2).count() == 2
    assert sorted(Post.objects.distinct("tags")) == ["x", "y", "z"]
    assert list(Post.objects.order_by("views").scalar("title")) == ["hello", "third", "second"]
    assert list(Post.objects.order_by("views").values_list("title", "views")) == \
        [("hello", 0), ("third", 2), ("second", 5)]
    with pytest.raises(DoesNotExist):
        Post.objects.get(title="nope")
    with pytest.raises(MultipleObjectsReturned):
        Post.objects.get(views__gte=0)
    assert [a.name for a in Author.objects.collation({"locale": "en", "strength": 2})
            .filter(name="ANN")] == ["ann"]


def test_only_and_exclude_projections(posts):
    only = Post.objects(title="hello").only("title", "views").as_pymongo().first()
    assert set(only) == {"_id", "title", "views"}
    excluded = Post.objects(title="hello").exclude("comments", "extra", "readers").as_pymongo().first()
    assert "comments" not in excluded and "extra" not in excluded and "title" in excluded
    sliced = Post.objects(title="hello").fields(slice__tags=1).as_pymongo().first()
    assert sliced["tags"] == ["x"]
    matched = Post.objects(title="hello").fields(comments={"$elemMatch": {"text": "c1"}}).first()
    assert [c.text for c in matched.comments] == ["c1"]


def test_atomic_updates(posts, people):
    ann, bob, cy = people
    hello = Post.objects(title="hello")
    assert hello.update_one(inc__views=3, push__tags="w") == 1
    assert hello.update_one(pull__tags="x") == 1
    assert hello.update_one(add_to_set__tags="y") == 1  # already there: matched, not duplicated
    assert hello.update_one(push__comments=Comment(text="c2", votes=1)) == 1
    assert Post.objects(title="hello", comments__text="c1").update_one(inc__comments__S__votes=5) == 1
    assert hello.update_one(unset__extra=1, max__views=10) == 1
    raw = Post._get_collection().find_one({"title": "hello"})
    assert raw["tags"] == ["y", "w"] and raw["views"] == 10 and "extra" not in raw
    assert [(c["text"], c["votes"]) for c in raw["comments"]] == [("c1", 5), ("c2", 1)]
    assert hello.update_one(pop__comments=1) == 1
    assert [c.text for c in hello.get().comments] == ["c1"]
    assert Post.objects(author=ann).update(set__section="news") == 2
    assert Author.objects(name="dee").update_one(set__age=50, upsert=True) == 1
    assert Author.objects.get(name="dee").age == 50
    assert Author.objects(name="bob").modify(inc__age=1, new=True).age == 41
    created = Author.objects(name="eve").modify(upsert=True, new=True, set_on_insert__age=18)
    assert (created.name, created.age) == ("eve", 18)
    assert cy.modify(age=23) is True and Author.objects.get(name="cy").age == 23
    cy.country = "it"
    cy.email = None
    cy.save()  # a delta save: $set and $unset of the changed fields only
    stored = Author._get_collection().find_one({"name": "cy"})
    assert stored["country"] == "it" and "email" not in stored


def test_aggregation_helpers(posts):
    assert Post.objects.sum("views") == 7
    assert Post.objects.average("views") == pytest.approx(7 / 3)
    by_tag = list(Post.objects.aggregate([{"$unwind": "$tags"},
                                          {"$group": {"_id": "$tags", "n": {"$sum": 1}}},
                                          {"$sort": {"_id": 1}}]))
    assert by_tag == [{"_id": "x", "n": 1}, {"_id": "y", "n": 2}, {"_id": "z", "n": 1}]
    joined = list(Post.objects(title="second").aggregate([
        {"$lookup": {"from": "author", "localField": "author", "foreignField": "_id", "as": "a"}},
        {"$project": {"_id": 0, "title": 1, "who": {"$first": "$a.name"}}}]))
    assert joined == [{"title": "second", "who": "bob"}]


def test_graph_lookup(mdb):
    for name, boss in [("a", None), ("b", "a"), ("c", "b"), ("d", "b"), ("e", None)]:
        Employee(name=name, boss=boss).save()
    reports = list(Employee.objects(name="a").aggregate([
        {"$graphLookup": {"from": "employee", "startWith": "$name", "connectFromField": "name",
                          "connectToField": "boss", "as": "reports", "depthField": "depth"}},
        {"$project": {"_id": 0, "reports": {"$sortArray": {"input": "$reports.name",
                                                           "sortBy": 1}}}}]))
    assert reports == [{"reports": ["b", "c", "d"]}]


def test_aggregate_lookup_through_dbref(posts):
    joined = list(Post.objects(title="hello").aggregate([
        {"$lookup": {"from": "author", "localField": "reviewer.$id", "foreignField": "_id",
                     "as": "r"}},
        {"$project": {"_id": 0, "who": {"$first": "$r.name"}}}]))
    assert joined == [{"who": "bob"}]


def test_item_frequencies(posts):
    assert Post.objects.item_frequencies("tags") == {"x": 1, "y": 2, "z": 1}


def test_query_counter(posts):
    with query_counter() as queries:
        assert queries == 0
        list(Post.objects(title="hello"))
        assert queries == 1
        Post.objects(title="hello").first()
        Author.objects.count()
        assert queries == 3
    assert me.connection.get_db().command({"profile": -1})["was"] == 0  # the level it found


def test_update_modifiers_beyond_set(mdb):
    cart = Cart(lines=[Line(sku="a", qty=1), Line(sku="b", qty=5)]).save()
    carts = Cart.objects(id=cart.id)
    assert carts.update_one(__raw__={"$inc": {"lines.$[big].qty": 10}},
                            array_filters=[{"big.qty": {"$gt": 2}}]) == 1
    stored = carts.get()
    assert [line.qty for line in stored.lines] == [1, 15]
    assert [line.sku for line in stored.lines.filter(qty=15)] == ["b"]
    entry = Ledger(labels=["b", "a"], counts={"x": 1}, blob=b"\x00\x01").save()
    ledger = Ledger.objects(id=entry.id)
    assert ledger.update_one(push__labels__0="0") == 1  # $push with $position
    assert ledger.as_pymongo().get()["labels"] == ["0", "a", "b"]
    assert ledger.update_one(pull_all__labels=["a", "0"], inc__counts__x=2) == 1
    assert ledger.update_one(rename__blob="bytes", mul__number=5) == 1
    assert ledger.update_one(__raw__={"$currentDate": {"touched": True}, "$min": {"number": 3}}) == 1
    raw = ledger.as_pymongo().get()
    assert (raw["labels"], raw["counts"], raw["bytes"], raw["number"]) == (["b"], {"x": 3}, b"\x00\x01", 3)
    assert "blob" not in raw and isinstance(raw["touched"], datetime.datetime)


def test_capped_collection_inheritance_and_field_types(mdb):
    for i in range(5):
        Event(i=i).save()
    assert [e.i for e in Event.objects.order_by("$natural")] == [2, 3, 4]
    assert Event._get_collection().options() == {"capped": True, "size": 4096, "max": 3}
    Dog(name="rex", bark="loud").save()
    Cat(name="tom").save()
    Animal(name="generic").save()
    assert sorted(a.name for a in Animal.objects) == ["generic", "rex", "tom"]
    assert [type(a).__name__ for a in Animal.objects(name="tom")] == ["Cat"]
    assert [a.name for a in Dog.objects] == ["rex"]
    assert [a.name for a in Animal.objects.no_sub_classes()] == ["generic"]
    assert "_cls_1_name_1" in Animal._get_collection().index_information()
    uid = uuid.uuid4()
    when = datetime.datetime(2020, 1, 2, 3, 4, 5, 678901)
    Ledger(amount=decimal.Decimal("12.345"), uid=uid, blob=b"\x00\x01", when=when,
           labels=["b", "a"], counts={"x": 1}).save()
    Ledger(amount=decimal.Decimal("1")).save()
    first = Ledger.objects.order_by("number").first()
    assert (first.number, first.amount, first.uid, first.blob, first.when, first.labels,
            first.counts) == (1, decimal.Decimal("12.35"), uid, b"\x00\x01", when, ["a", "b"],
                              {"x": 1})
    assert [x.number for x in Ledger.objects.order_by("-number")] == [2, 1]  # SequenceField
    assert Ledger.objects(uid=uid).count() == 1  # a query on a UUID (binary subtype 4)


def test_switch_db_and_collection(mdb):
    with switch_db(Dog, "other") as OtherDog:
        OtherDog(name="elsewhere").save()
        assert OtherDog.objects.count() == 1
    assert Dog.objects.count() == 0
    assert me.connection.get_db("other").animal.count_documents({}) == 1
    with switch_collection(Employee, "employee_archive") as Archived:
        Archived(name="old").save()
    assert mdb.employee_archive.count_documents({}) == 1 and Employee.objects.count() == 0


def test_file_field_on_gridfs(mdb, people):
    payload = b"0123456789" * 30000  # 300 kB: two 255 kB chunks
    post = Post(title="with file", slug="with-file", author=people[0])
    post.attachment.put(io.BytesIO(payload), content_type="application/octet-stream",
                        filename="blob.bin")
    post.save()
    stored = Post.objects.get(title="with file").attachment
    assert stored.read() == payload
    assert (stored.filename, stored.content_type, stored.length) == \
        ("blob.bin", "application/octet-stream", len(payload))
    assert mdb["attachments.chunks"].count_documents({"files_id": stored.grid_id}) == 2
    post.attachment.replace(io.BytesIO(b"new"), filename="small.txt")
    post.save()
    assert Post.objects.get(title="with file").attachment.read() == b"new"
    assert mdb["attachments.files"].count_documents({}) == 1  # replace deleted the old file
    post.attachment.delete()
    post.save()
    assert mdb["attachments.files"].count_documents({}) == 0
    assert mdb["attachments.chunks"].count_documents({}) == 0


def test_validation_errors(mdb):
    with pytest.raises(ValidationError) as info:
        Author(name="x" * 50, email="nope", age=-1, country="es", site="not a url").save()
    assert set(info.value.errors) == {"name", "email", "age", "country", "site"}
    with pytest.raises(ValidationError) as info:
        Post(slug="Bad Slug").validate()
    assert set(info.value.errors) == {"title", "slug"}
    assert Author.objects.count() == 0 and Post.objects.count() == 0


def test_duplicate_key_errors(people):
    with pytest.raises(NotUniqueError, match="E11000 duplicate key error collection: "
                                             "e2e_mongoengine.author index: name_1"):
        Author(name="ann").save()
    with pytest.raises(BulkWriteError, match="E11000"):
        Author.objects.insert([Author(name="fay"), Author(name="bob")])  # ordered: fay is kept
    with pytest.raises(NotUniqueError):
        Author.objects(name="cy").update_one(set__name="ann")
    Post(title="a", slug="same", section="s1").save()
    Post(title="b", slug="same", section="s2").save()  # unique_with: the pair must differ
    with pytest.raises(NotUniqueError):
        Post(title="c", slug="same", section="s1").save()
    assert sorted(Author.objects.scalar("name")) == ["ann", "bob", "cy", "fay"]
