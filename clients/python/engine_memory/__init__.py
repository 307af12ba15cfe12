"""engine_memory: the memory of LLM browser agents, from Python.

    from engine_memory import Client
    mem = Client()  # a plain engine serve's socket, or ENGINE_SERVER's / ENGINE_DATA_DIR's
    tips = mem.recall_error("click e12", "element is not visible", domain="shop.example")

Standard library only; synchronous; typed (dataclasses). The server's
problem answers are raised as EngineError subclasses.
"""

from .client import Client, default_data_dir
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
    "Client", "default_data_dir", "EngineError", "BadRequest", "Busy", "Forbidden", "NotFound", "PayloadTooLarge",
    "RequestTimeout", "ServerError", "Unauthorized", "Unreachable", "UnsupportedMediaType",
    "Context", "Fact", "FactList", "FactOutcome", "Learned", "Lesson", "LessonPage", "Namespace",
    "RecordedLesson", "Run", "RunPage", "Selector", "Step", "Trajectory", "TrajectoryMatch",
]
