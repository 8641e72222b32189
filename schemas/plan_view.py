"""A served plan as `PlanCache.lookup` returns it: its JSON form, read-only, whose fields are also attributes.

`res.plan.steps[0].query` and `res.plan["steps"][0]["query"]` read the same value. A field the JSON leaves out
(a step's `depends_on`, `filters` or `extract` at their defaults) is no key, but its attribute reads the model's
default (`schemas.plan.Plan`, `Step`, `Extract`). The objects are a `dict` and a `list`, so `json.dumps` writes
them as the JSON they were made from.
"""

from __future__ import annotations

from typing import Any, NoReturn

from schemas.plan import Extract, Step


def _read_only(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"a served plan is read-only ({type(self).__name__}); copy it to change it: "
                    "schemas.plan.Plan.model_validate(res.plan)")


def frozen(value: Any) -> Any:
    """A JSON value with its objects and arrays read-only."""
    if isinstance(value, dict) and not isinstance(value, FrozenDict):
        return FrozenDict(value)
    if isinstance(value, list) and not isinstance(value, FrozenList):
        return FrozenList(value)
    return value


class FrozenList(list[Any]):
    """A JSON array that cannot be changed."""

    __slots__ = ()

    def __init__(self, items: Any = ()) -> None:
        super().__init__(self._item(v) for v in items)

    def _item(self, value: Any) -> Any:
        return frozen(value)

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild it whole, never item by item
        return type(self), (list(self),)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only


class FrozenDict(dict[str, Any]):
    """A JSON object that cannot be changed."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, value in dict.items(self):
            dict.__setitem__(self, key, self._field(key, value))

    def _field(self, key: str, value: Any) -> Any:
        return frozen(value)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (dict(self),)

    __setitem__ = __delitem__ = __ior__ = _read_only
    pop = popitem = setdefault = update = clear = _read_only


class _Steps(FrozenList):
    def _item(self, value: Any) -> Any:
        return value if isinstance(value, StepView) else StepView(value)


_EXTRACT = {name: f.get_default(call_default_factory=True) for name, f in Extract.model_fields.items()}
_STEP = {name: f.get_default(call_default_factory=True) for name, f in Step.model_fields.items()}


class ExtractView(FrozenDict):
    """How a step's answer is extracted (`schemas.plan.Extract`)."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return str(self.get("kind", _EXTRACT["kind"]))

    @property
    def facet(self) -> str | None:
        return self.get("facet", _EXTRACT["facet"])

    @property
    def top(self) -> int:
        return int(self.get("top", _EXTRACT["top"]))


class StepView(FrozenDict):
    """One step of a served plan (`schemas.plan.Step`)."""

    __slots__ = ()

    def _field(self, key: str, value: Any) -> Any:
        if key == "extract" and isinstance(value, dict) and not isinstance(value, ExtractView):
            return ExtractView(value)
        return frozen(value)

    @property
    def id(self) -> str:
        return str(self["id"])

    @property
    def query(self) -> str:
        return str(self["query"])

    @property
    def depends_on(self) -> list[str]:
        return self.get("depends_on", FrozenList(_STEP["depends_on"]))

    @property
    def filters(self) -> dict[str, str]:
        return self.get("filters", FrozenDict(_STEP["filters"]))

    @property
    def extract(self) -> ExtractView | None:
        return self.get("extract", _STEP["extract"])


class PlanView(FrozenDict):
    """A served plan (`schemas.plan.Plan`): its steps, and whether to search the original question beside them."""

    __slots__ = ()

    def _field(self, key: str, value: Any) -> Any:
        if key == "steps" and isinstance(value, list) and not isinstance(value, _Steps):
            return _Steps(value)
        return frozen(value)

    @property
    def steps(self) -> list[StepView]:
        return self.get("steps", FrozenList())

    @property
    def keep_original(self) -> bool:
        return bool(self.get("keep_original", False))
