"""runbook.record against dataclasses itself: each class is made twice, once with @dataclass and
once with @record, and both must behave alike on what the code uses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from runbook.record import record


def twins(frozen: bool = False, eq: bool = True):
    def make(decorate):
        @decorate
        class Event:
            """A record under test."""

            kind: str
            line: int = 0
            tags: list[str] = field(default_factory=list)
            secret: str = field(default="x", repr=False)
            seen: int = field(default=0, compare=False)
            derived: str = field(init=False, default="")

            def __post_init__(self):
                object.__setattr__(self, "derived", f"{self.kind}@{self.line}")

        return Event

    return make(dataclass(frozen=frozen, eq=eq)), make(record(frozen=frozen, eq=eq))


@pytest.mark.parametrize("frozen", [False, True])
def test_construction_repr_eq_and_fields_match_dataclass(frozen):
    dc, rc = twins(frozen=frozen)
    for args, kwargs in [(("oom",), {}), (("oom", 3), {"tags": ["a"]}), ((), {"kind": "x"})]:
        a, b = dc(*args, **kwargs), rc(*args, **kwargs)
        assert repr(a) == repr(b)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert b.derived == a.derived  # __post_init__ ran
    assert [f.name for f in dataclasses.fields(rc)] == [f.name for f in dataclasses.fields(dc)]
    assert dataclasses.is_dataclass(rc)
    assert rc("a", 1) == rc("a", 1, seen=5)  # compare=False field left out
    assert rc("a", 1) != rc("a", 2)
    assert rc("a").tags is not rc("a").tags  # a fresh default each time


def test_hash_rules_follow_dataclass():
    dc, rc = twins(frozen=True)
    assert hash(rc("a", 1, tags=())) == hash(rc("a", 1, tags=()))
    dc, rc = twins(frozen=False)
    with pytest.raises(TypeError):
        hash(rc("a"))
    dc, rc = twins(frozen=True, eq=False)
    a = rc("a")
    assert a != rc("a") and a == a and hash(a) == object.__hash__(a)


def test_frozen_assignment_and_deletion_raise_like_dataclass():
    _, rc = twins(frozen=True)
    r = rc("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.kind = "b"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.kind
    _, rc = twins(frozen=False)
    r = rc("a")
    r.kind = "b"
    assert r.kind == "b"


@pytest.mark.parametrize("frozen", [False, True])
def test_replace_copy_and_pickle(frozen):
    _, rc = twins(frozen=frozen)
    r = rc("a", 1, tags=["t"])
    s = dataclasses.replace(r, line=2)
    assert (s.kind, s.line, s.tags, s.derived) == ("a", 2, ["t"], "a@2")
    assert copy.deepcopy(r) == r
    p = Pickled("a", [1])
    assert pickle.loads(pickle.dumps(p)) == p


@record(frozen=True)
class Pickled:
    """pickle finds a class by its module and name: a module-level one."""

    kind: str
    items: list[int]


def test_bad_calls_name_the_class_and_the_argument():
    _, rc = twins()
    with pytest.raises(TypeError, match=r"Event\(\) missing required argument: 'kind'"):
        rc()
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        rc("a", nope=1)
    with pytest.raises(TypeError, match="multiple values for argument 'kind'"):
        rc("a", kind="b")
    with pytest.raises(TypeError, match="takes 5 positional arguments but 6"):
        rc("a", 1, [], "s", 0, "extra")
    with pytest.raises(TypeError, match="unexpected keyword argument 'derived'"):
        rc("a", derived="no")  # init=False is not an argument


def test_methods_the_class_writes_win_and_inheritance_adds_fields():
    @record
    class Base:
        """Base."""

        a: int

        def __repr__(self):
            return "mine"

    @record(frozen=True)
    class Child(Base):
        """Child."""

        b: int = 2

    assert repr(Base(1)) == "mine"
    c = Child(1)
    assert (c.a, c.b) == (1, 2) and [f.name for f in dataclasses.fields(c)] == ["a", "b"]
    with pytest.raises(TypeError, match="without a default follows"):

        @record
        class Wrong:
            """Order."""

            a: int = 1
            b: int  # type: ignore[misc]


def test_fields_are_collected_as_dataclass_collects_them():
    """Without @dataclass's own pass: ClassVars are not fields, a mutable default is refused, an
    InitVar is refused, a base's fields come first, defaults stay class attributes and a
    factory's field leaves none."""
    from typing import ClassVar

    @record
    class Base:
        a: int
        b: list = field(default_factory=list)
        c: ClassVar[int] = 7

    @record
    class Child(Base):
        d: str = "x"

    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b", "d"]
    assert Child.d == "x" and Base.c == 7 and "b" not in Base.__dict__
    assert Child(1).b == [] and Child(1).b is not Child(1).b
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Bad:
            x: list = []  # noqa: RUF012

    with pytest.raises(TypeError, match="InitVar"):

        @record
        class Init:
            x: dataclasses.InitVar[int]
