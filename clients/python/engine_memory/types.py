"""Typed records of the memory, as the server answers them.

Each type keeps the fields this client knows; fields a newer server adds
are kept in ``extra`` rather than refused, so an upgraded server never
breaks an older client.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar

T = TypeVar("T")


def _from(cls: Type[T], d: Optional[Dict[str, Any]]) -> T:
    """Builds cls from a JSON object: known fields by name, the rest in extra."""
    d = dict(d or {})
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kw = {k: d.pop(k) for k in list(d) if k in names and k != "extra"}
    obj = cls(**kw)  # type: ignore[call-arg]
    if "extra" in names:
        obj.extra = d  # type: ignore[attr-defined]
    return obj


def _list(cls: Type[T], xs: Optional[List[Dict[str, Any]]]) -> List[T]:
    return [cls.from_dict(x) for x in xs or []]  # type: ignore[attr-defined]


@dataclass
class Lesson:
    """Advice learned from a failure (or written by a person)."""

    id: str = ""
    lesson: str = ""
    category: str = ""  # tool_fallback, best_practice, error_recovery, site_specific
    failed_command: str = ""
    error_pattern: str = ""
    domain: str = ""
    use_count: int = 0
    created_at: str = ""
    last_used: str = ""
    source: str = ""
    trust: str = ""  # trusted, candidate, quarantined
    quarantine: str = ""  # why the text was held, when it was
    triggered_domains: List[str] = field(default_factory=list)
    shown: int = 0
    used: int = 0
    helped: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Lesson":
        return _from(cls, d)


@dataclass
class RecordedLesson:
    """A recorded lesson, and whether it is new (else one more use)."""

    lesson: Lesson
    created: bool

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RecordedLesson":
        return cls(lesson=Lesson.from_dict(d.get("lesson") or {}), created=bool(d.get("created")))


@dataclass
class LessonPage:
    lessons: List[Lesson]
    next: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LessonPage":
        return cls(lessons=_list(Lesson, d.get("lessons")), next=d.get("next", ""))


@dataclass
class Learned:
    """What learning did with one failure→recovery pattern of an action log."""

    lesson: Lesson
    created: bool
    step: int
    recovery: str

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Learned":
        return cls(lesson=Lesson.from_dict(d.get("lesson") or {}), created=bool(d.get("created")),
                   step=int(d.get("step", 0)), recovery=d.get("recovery", ""))


@dataclass
class Fact:
    """Something true of a site, with a confidence."""

    id: str = ""
    domain: str = ""
    type: str = ""  # timing, selector, pattern, quirk
    key: str = ""
    value: str = ""
    confidence: float = 0.0
    sources: int = 0
    first_seen: str = ""
    last_seen: str = ""
    quarantine: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Fact":
        return _from(cls, d)


@dataclass
class FactOutcome:
    """What one sighting of a fact did: result is new, confirmed, contradicted, quarantined…"""

    fact: Fact
    result: str
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FactOutcome":
        d = dict(d)
        return cls(fact=Fact.from_dict(d.pop("fact", {})), result=d.pop("result", ""), extra=d)


@dataclass
class FactList:
    facts: List[Fact]
    next: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FactList":
        return cls(facts=_list(Fact, d.get("facts")), next=d.get("next", ""))


@dataclass
class Selector:
    """Where an element of a site is, with its record."""

    domain: str = ""
    role: str = ""
    name: str = ""
    selector: str = ""
    path: str = ""
    successes: int = 0
    failures: int = 0
    first_seen: str = ""
    refused: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Selector":
        return _from(cls, d)


@dataclass
class Step:
    """One step of a trajectory."""

    action: str
    role: str = ""
    name: str = ""
    selector: str = ""
    value: str = ""
    url: str = ""
    verified: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Step":
        return _from(cls, d)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"action": self.action, "verified": self.verified}
        for k in ("role", "name", "selector", "value", "url"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        out.update(self.extra)
        return out


@dataclass
class Trajectory:
    """A recorded successful run, replayed for similar tasks."""

    id: str = ""
    domain: str = ""
    goal: str = ""
    template: str = ""
    steps: List[Step] = field(default_factory=list)
    recorded_at: str = ""
    expires_at: str = ""
    runs: int = 0
    quarantine: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Trajectory":
        t = _from(cls, d)
        t.steps = _list(Step, d.get("steps"))
        return t


@dataclass
class TrajectoryMatch:
    """The recorded run most like a task (trajectory None: none close enough)."""

    trajectory: Optional[Trajectory]
    similarity: float
    threshold: float
    steps: List[Step]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "TrajectoryMatch":
        m = d.get("match") or {}
        return cls(trajectory=Trajectory.from_dict(m["trajectory"]) if m.get("trajectory") else None,
                   similarity=float(m.get("similarity", 0.0)), threshold=float(d.get("threshold", 0.0)),
                   steps=_list(Step, m.get("steps")))


@dataclass
class Context:
    """Everything memory holds for a page and a goal, within a token budget.

    ``text`` is the block to put in the prompt; the lists are its parts.
    """

    text: str = ""
    domain: str = ""
    goal: str = ""
    tokens: int = 0
    budget: int = 0
    lessons: List[Any] = field(default_factory=list)
    error_tips: List[Any] = field(default_factory=list)
    facts: List[Any] = field(default_factory=list)
    selectors: List[Any] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Context":
        return _from(cls, d)


@dataclass
class Run:
    """A run's manifest."""

    run_id: str = ""
    goal: str = ""
    domain: str = ""
    status: str = ""  # running, completed, failed, crashed
    start_url: str = ""
    current_url: str = ""
    final_url: str = ""
    success: Optional[bool] = None
    summary: str = ""
    turn_count: int = 0
    started_at: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Run":
        return _from(cls, d)


@dataclass
class RunPage:
    runs: List[Run]
    next: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RunPage":
        return cls(runs=_list(Run, d.get("runs")), next=d.get("next", ""))


@dataclass
class Namespace:
    name: str
    keys: int = 0
    sites: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Namespace":
        return _from(cls, d)
