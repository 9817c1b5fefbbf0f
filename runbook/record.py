"""Records: dataclasses whose methods are functions written once, not code generated per class.

`@dataclass` writes __init__, __repr__ and __eq__ (and, frozen, __setattr__ and __delattr__) as
source text and compiles each one with exec() when the class is created: on every import, since
a .pyc cannot hold them. For the ~35 classes on `runbook diagnose`'s path that was about half of
its start-up time over `import click` (bench/startup.py). `@record` lets dataclasses collect the
fields only (init, repr and eq off: nothing compiled) and installs the functions below, which
read a per-class plan of the fields.

To the rest of the code a record is a dataclass: dataclasses.fields, replace, asdict and
is_dataclass work on it, and type checkers see `@dataclass` itself (the TYPE_CHECKING branch), so
every constructor call stays checked. What it keeps of dataclass: positional and keyword
arguments in field order, defaults and default factories, field(init=False), field(repr=False),
field(compare=False), __post_init__, frozen (assignment raises FrozenInstanceError), eq with the
hash rules of dataclass (frozen and eq: hash of the compared fields; eq only: unhashable; eq off:
identity), and methods a class writes itself win. kw_only fields are refused when the class is
made and InitVars when it is called: nothing here needs them.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import TYPE_CHECKING, Any

_MISSING = dataclasses.MISSING
_PLAN = "__record_plan__"


class _Plan:
    __slots__ = (
        "template",
        "factories",
        "required",
        "init",
        "init_set",
        "repr",
        "compare",
        "post_init",
    )

    def __init__(self, cls: type):
        fields = dataclasses.fields(cls)  # InitVars are not among them: refused as arguments
        for f in fields:
            if f.kw_only is True:
                raise TypeError(f"{cls.__name__}.{f.name}: @record has no kw_only; use @dataclass")
        # Every field in order (instances keep dataclass's attribute order), each with its default
        # or _MISSING until an argument or a factory fills it; init=False fields without any default
        # stay unset, as dataclass leaves them.
        self.template = {
            f.name: f.default
            for f in fields
            if f.init or f.default is not _MISSING or f.default_factory is not _MISSING
        }
        self.factories = tuple(
            (f.name, f.default_factory, f.init) for f in fields if f.default_factory is not _MISSING
        )
        self.required = tuple(
            f.name
            for f in fields
            if f.init and f.default is _MISSING and f.default_factory is _MISSING
        )
        self.init = tuple(f.name for f in fields if f.init)
        self.init_set = frozenset(self.init)
        self.repr = tuple(f.name for f in fields if f.repr)
        self.compare = tuple(f.name for f in fields if f.compare)
        self.post_init = hasattr(cls, "__post_init__")
        seen_default = None
        for f in fields:  # the order rule dataclass's own __init__ enforces
            if not f.init:
                continue
            if f.default is not _MISSING or f.default_factory is not _MISSING:
                seen_default = f.name
            elif seen_default:
                raise TypeError(
                    f"{cls.__name__}: field {f.name!r} without a default follows {seen_default!r}"
                )


def _arguments(cls: type, plan: _Plan, args: tuple, kwargs: dict) -> dict:
    """Positional arguments merged into the keyword ones, or the TypeError Python would raise."""
    if len(args) > len(plan.init):
        raise TypeError(
            f"{cls.__name__}() takes {len(plan.init)} positional arguments but {len(args)} "
            "were given"
        )
    given = dict(zip(plan.init, args, strict=False))  # fewer args than fields: the rest by name
    for name, value in kwargs.items():
        if name not in plan.init_set:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {name!r}")
        if name in given:
            raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
        given[name] = value
    return given


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    # Written for speed as well: parsers make a record per matching line. The instance dict is
    # filled directly (frozen records too, as dataclass's object.__setattr__ does).
    cls = type(self)
    plan: _Plan = getattr(cls, _PLAN)
    if args or not plan.init_set.issuperset(kwargs):
        kwargs = _arguments(cls, plan, args, kwargs)
    values = self.__dict__
    values.update(plan.template)
    values.update(kwargs)
    for name, factory, init in plan.factories:
        if not init or name not in kwargs:
            values[name] = factory()
    for name in plan.required:
        if name not in kwargs:
            raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
    if plan.post_init:
        self.__post_init__()


def _repr(self: Any) -> str:
    plan: _Plan = getattr(type(self), _PLAN)
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in plan.repr)
    return f"{type(self).__qualname__}({inner})"


def _key(self: Any) -> tuple:
    return tuple(getattr(self, name) for name in getattr(type(self), _PLAN).compare)


def _eq(self: Any, other: Any) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _key(self) == _key(other)


def _hash(self: Any) -> int:
    return hash(_key(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return (
        getattr(annotation, "__origin__", None) is typing.ClassVar or annotation is typing.ClassVar
    )


def _is_initvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("InitVar", "dataclasses.InitVar"))
    return isinstance(annotation, dataclasses.InitVar) or annotation is dataclasses.InitVar


def _collect_fields(cls: type) -> None:
    """What @dataclass(init=False, repr=False, eq=False) leaves on a class, without its cost
    (about 75 us a class, measured: ClassVar checks that look up the module, abstract-method
    updates, match args): `__dataclass_fields__` with a Field per annotated name, the bases'
    fields first, and each default as the class attribute (a factory's field removed from it).
    dataclasses.fields, replace, asdict and is_dataclass read no more than that."""
    fields: dict[str, dataclasses.Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        fields.update(getattr(base, "__dataclass_fields__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        if _is_initvar(annotation):
            raise TypeError(f"{cls.__name__}.{name}: @record has no InitVar; use @dataclass")
        default = cls.__dict__.get(name, _MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            if default is not _MISSING and type(default).__hash__ is None:
                raise ValueError(
                    f"mutable default {type(default)} for field {name} is not allowed: use "
                    "default_factory"
                )
            f = dataclasses.field(default=default)
        f.name, f.type = name, annotation
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
        if f.kw_only is _MISSING:  # type: ignore[attr-defined]
            f.kw_only = False  # type: ignore[attr-defined]
        if isinstance(default, dataclasses.Field):
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        fields[name] = f
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]


def _make(cls: type, frozen: bool, eq: bool) -> type:
    own = dict(cls.__dict__)  # what the class body wrote itself, before fields are collected
    _collect_fields(cls)
    plan = _Plan(cls)
    setattr(cls, _PLAN, plan)
    if not own.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({', '.join(plan.init)})"
    methods: dict[str, Any] = {"__init__": _init, "__repr__": _repr}
    if eq:
        methods["__eq__"] = _eq
        if "__hash__" not in own:
            methods["__hash__"] = _hash if frozen else None
    if frozen:
        methods["__setattr__"] = _frozen_setattr
        methods["__delattr__"] = _frozen_delattr
    for name, function in methods.items():
        if name not in own:
            setattr(cls, name, function)
    return cls


if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:

    def record(cls=None, /, *, frozen: bool = False, eq: bool = True):
        """@record or @record(frozen=True, eq=False): a dataclass without generated code."""
        if cls is None:
            return lambda c: _make(c, frozen, eq)
        return _make(cls, frozen, eq)
