"""engine_memory: the memory of LLM browser agents, from Python.

    from engine_memory import Client
    mem = Client("unix:///home/me/.local/share/engine/engine.sock")
    tips = mem.recall_error("click e12", "element is not visible", domain="shop.example")

Standard library only; synchronous; typed (dataclasses). The server's
problem answers are raised as EngineError subclasses.
"""

from .client import Client
from .errors import (
    BadRequest,
    Busy,
    EngineError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RequestTimeout,
    ServerError,
    Unauthorized,
    Unreachable,
    UnsupportedMediaType,
)
from .types import (
    Context,
    Fact,
    FactList,
    FactOutcome,
    Learned,
    Lesson,
    LessonPage,
    Namespace,
    RecordedLesson,
    Run,
    RunPage,
    Selector,
    Step,
    Trajectory,
    TrajectoryMatch,
)

__version__ = "0.1.0"

__all__ = [
    "Client", "EngineError", "BadRequest", "Busy", "Forbidden", "NotFound", "PayloadTooLarge",
    "RequestTimeout", "ServerError", "Unauthorized", "Unreachable", "UnsupportedMediaType",
    "Context", "Fact", "FactList", "FactOutcome", "Learned", "Lesson", "LessonPage", "Namespace",
    "RecordedLesson", "Run", "RunPage", "Selector", "Step", "Trajectory", "TrajectoryMatch",
]
