"""A synchronous client of the engine memory server (engine serve), standard library only."""

from __future__ import annotations

import http.client
import json
import os
import socket
import urllib.parse
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from .errors import EngineError, Unreachable, error_for
from .types import (
    Context,
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

__all__ = ["Client", "default_data_dir"]

JSON = Dict[str, Any]


class _UnixConnection(http.client.HTTPConnection):
    """An HTTP connection over a unix socket (the data dir's engine.sock)."""

    def __init__(self, path: str, timeout: float):
        super().__init__("engine", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def default_data_dir() -> str:
    """The data dir the engine command line uses when none is named:
    ``$XDG_DATA_HOME/engine``, else ``~/.local/share/engine``."""
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return os.path.join(xdg, "engine")
    home = os.path.expanduser("~")
    if home == "~":
        raise ValueError("no server address: give one, or set ENGINE_SERVER (or ENGINE_DATA_DIR for its socket); "
                         "there is no home directory for the default data dir")
    return os.path.join(home, ".local", "share", "engine")


class Client:
    """Talks to one memory server.

    ``address`` is ``http://host:port`` (a TCP listener: give ``token``, the
    data dir's serve.token), ``unix:///path/to/engine.sock`` or a socket's
    path. Without an address, ``ENGINE_SERVER`` (as the CLI) or ``ENGINE_URL`` is read, then the socket of
    ``ENGINE_DATA_DIR``, then, as the CLI, the socket of the default data dir
    (:func:`default_data_dir`), where a plain ``engine serve`` listens. ``namespace`` runs every request in that namespace
    of the store; ``run`` and ``model`` stamp what the client writes with
    the run and model that learned it.

    Every method raises an :class:`~engine_memory.errors.EngineError`
    subclass (BadRequest, NotFound, Unauthorized, …) when the server
    answers with a problem.
    """

    def __init__(
        self,
        address: Optional[str] = None,
        *,
        token: Optional[str] = None,
        timeout: float = 30.0,
        namespace: Optional[str] = None,
        run: Optional[str] = None,
        model: Optional[str] = None,
    ):
        if address is None:
            # ENGINE_SERVER is what the engine command line reads; ENGINE_URL too.
            address = os.environ.get("ENGINE_SERVER") or os.environ.get("ENGINE_URL") or None
        self._hint = ""
        if address is None:
            data = os.environ.get("ENGINE_DATA_DIR")
            if not data:
                # What engine serve holds when nothing names a data dir.
                data = default_data_dir()
                self._hint = " (no address given and ENGINE_SERVER, ENGINE_DATA_DIR unset: the default data dir's socket)"
            address = os.path.join(data, "engine.sock")
        if token is None:
            token = os.environ.get("ENGINE_TOKEN")
        self.timeout = timeout
        self.token = token
        self.namespace = namespace
        self.run_id = run
        self.model = model
        if address.startswith("unix://"):
            self._unix: Optional[str] = address[len("unix://"):]
            self._host, self._port, self._tls = "", 0, False
        elif address.startswith(("http://", "https://")):
            u = urllib.parse.urlsplit(address)
            if not u.hostname:
                raise ValueError(f"{address!r}: no host")
            self._unix = None
            self._tls = u.scheme == "https"
            self._host, self._port = u.hostname, u.port or (443 if self._tls else 80)
        elif address.startswith("/") or os.path.exists(address):
            self._unix = address
            self._host, self._port, self._tls = "", 0, False
        else:
            raise ValueError(f"{address!r}: want http://host:port, unix:///path/engine.sock or a socket's path")

    def with_namespace(self, namespace: str) -> "Client":
        """A client like this one whose requests run in namespace ("-": the default)."""
        c = object.__new__(Client)
        c.__dict__.update(self.__dict__)
        c.namespace = namespace
        return c

    # The transport.

    def _connection(self) -> http.client.HTTPConnection:
        if self._unix is not None:
            return _UnixConnection(self._unix, self.timeout)
        if self._tls:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        raw: Optional[bytes] = None,
        content_type: str = "application/json",
    ) -> Any:
        """Sends one request and returns its decoded JSON answer; any route of the API can be called this way."""
        if query:
            q = {k: _qv(v) for k, v in query.items() if v is not None and v != ""}
            if q:
                path += "?" + urllib.parse.urlencode(q)
        headers = {"Accept": "application/json"}
        data: Optional[bytes] = None
        if raw is not None:
            data = raw
        elif body is not None:
            data = json.dumps(body).encode()
        if method != "GET":
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if self.namespace:
            headers["Engine-Namespace"] = self.namespace
        if self.run_id:
            headers["Engine-Run"] = self.run_id
            headers["Engine-Source"] = "learned"
        if self.model:
            headers["Engine-Model"] = self.model
        conn = self._connection()
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as e:
            where = f"unix://{self._unix}" if self._unix is not None else \
                f"{'https' if self._tls else 'http'}://{self._host}:{self._port}"
            if isinstance(e, socket.timeout):
                why = f"no answer in {self.timeout:g} s"
            elif isinstance(e, OSError) and e.strerror:
                why = e.strerror
            else:
                why = str(e) or type(e).__name__
            raise Unreachable(f"{method} {path}: no answer from the engine server at {where}{self._hint} ({why}): "
                              "is engine serve running there?") from e
        finally:
            conn.close()
        ctype = resp.getheader("Content-Type", "")
        if resp.status >= 400:
            problem: JSON = {}
            detail = payload.decode(errors="replace").strip()
            if ctype.startswith("application/problem+json") or ctype.startswith("application/json"):
                try:
                    problem = json.loads(payload)
                    detail = problem.get("detail") or problem.get("title") or detail
                except ValueError:
                    pass
            raise error_for(resp.status, detail, problem)
        if not payload:
            return None
        try:
            return json.loads(payload)
        except ValueError as e:
            raise EngineError(resp.status, f"{method} {path}: the answer is not JSON: {e}") from None

    # The API itself.

    def health(self) -> JSON:
        """GET /v1/health: {"status": "ok", "schema": N}."""
        return self.request("GET", "/v1/health")

    def openapi(self) -> JSON:
        """GET /v1/openapi.json: the API's OpenAPI 3.1 document (served without a token)."""
        return self.request("GET", "/v1/openapi.json")

    # Recall: what an agent reads while it works.

    def tier1(self) -> List[Lesson]:
        """The lessons of every system prompt."""
        return [Lesson.from_dict(x) for x in self.request("GET", "/v1/recall/tier1")]

    def recall_error(self, command: str, error: str, domain: str = "") -> List[Lesson]:
        """Tips for a failed command's error (on domain, when given)."""
        body: JSON = {"command": command, "error": error}
        if domain:
            body["domain"] = domain
        return [Lesson.from_dict(x) for x in self.request("POST", "/v1/recall/error", body=body)]

    def recall_domain(self, host: str) -> List[Lesson]:
        """Tips for entering a site."""
        return [Lesson.from_dict(x) for x in self.request("GET", "/v1/recall/domain", query={"host": host})]

    def find_trajectory(self, domain: str, goal: str) -> TrajectoryMatch:
        """The recorded run most like goal on domain, with its steps adapted to the goal."""
        return TrajectoryMatch.from_dict(self.request("GET", "/v1/recall/trajectory", query={"domain": domain, "goal": goal}))

    def context(
        self,
        url: str,
        goal: str,
        *,
        budget: Optional[int] = None,
        step: Optional[int] = None,
        last_command: str = "",
        last_error: str = "",
    ) -> Context:
        """Everything memory holds for a page and a goal (and the tips for the last error), within budget tokens."""
        return Context.from_dict(self.request("GET", "/v1/context", query={
            "url": url, "goal": goal, "budget": budget, "step": step,
            "last_command": last_command, "last_error": last_error}))

    # Lessons.

    def lessons(self, *, domain: str = "", category: str = "", tier: Optional[int] = None,
                trust: str = "", limit: Optional[int] = None, cursor: str = "") -> LessonPage:
        """A page of lessons: Tier 1 first, then by use; page.next is the next page's cursor."""
        return LessonPage.from_dict(self.request("GET", "/v1/lessons", query={
            "domain": domain, "category": category, "tier": tier, "trust": trust, "limit": limit, "cursor": cursor}))

    def lesson(self, id: str) -> Lesson:
        return Lesson.from_dict(self.request("GET", "/v1/lessons/" + _seg(id)))

    def record_lesson(self, lesson: str, category: str, *, failed_command: str = "", error_pattern: str = "",
                      domain: str = "") -> RecordedLesson:
        """Records a lesson, or counts one more use of the lesson with the same failed command and error pattern."""
        return RecordedLesson.from_dict(self.request("POST", "/v1/lessons", body={
            "lesson": lesson, "category": category, "failed_command": failed_command,
            "error_pattern": error_pattern, "domain": domain}))

    def use_lesson(self, id: str, domain: str, *, helped: bool = False) -> Lesson:
        """Counts one use of a lesson on domain; helped says the action after it succeeded."""
        return Lesson.from_dict(self.request("POST", f"/v1/lessons/{_seg(id)}/use", body={"domain": domain, "helped": helped}))

    def remove_lesson(self, id: str) -> None:
        self.request("DELETE", "/v1/lessons/" + _seg(id))

    def learn(self, actions: Union[str, bytes, Iterable[Union[str, JSON]]], domain: str = "") -> List[Learned]:
        """Learns lessons from a run's action log: JSON lines, or a list of lines or of action objects."""
        if isinstance(actions, bytes):
            raw = actions
        elif isinstance(actions, str):
            raw = actions.encode()
        else:
            raw = "\n".join(a if isinstance(a, str) else json.dumps(a) for a in actions).encode() + b"\n"
        out = self.request("POST", "/v1/learn", query={"domain": domain}, raw=raw, content_type="application/jsonl")
        return [Learned.from_dict(x) for x in out]

    # Facts.

    def facts(self, *, domain: str = "", confident: bool = False, limit: Optional[int] = None, cursor: str = "") -> FactList:
        return FactList.from_dict(self.request("GET", "/v1/facts", query={
            "domain": domain, "confident": confident or None, "limit": limit, "cursor": cursor}))

    def observe_fact(self, domain: str, type: str, key: str, value: str) -> FactOutcome:
        """One sighting of a fact (type: timing, selector, pattern or quirk): raises its confidence, lowers rivals'."""
        return FactOutcome.from_dict(self.request("POST", "/v1/facts/observe", body={
            "domain": domain, "type": type, "key": key, "value": value}))

    # Selectors.

    def selectors(self, *, domain: str = "", url: str = "") -> List[Selector]:
        """Known selectors, best first (url: those a prompt gets on that page)."""
        out = self.request("GET", "/v1/selectors", query={"domain": domain, "url": url})
        return [Selector.from_dict(x) for x in out.get("selectors") or []]

    def record_selector(self, domain: str, role: str, name: str, selector: str, *, failed: bool = False,
                        reason: str = "", path: str = "") -> Selector:
        """Records that selector found (or, failed, did not find) the element role/name on domain."""
        body: JSON = {"domain": domain, "role": role, "name": name, "selector": selector}
        if failed:
            body["failed"] = True
        if reason:
            body["reason"] = reason
        if path:
            body["path"] = path
        return Selector.from_dict(self.request("POST", "/v1/selectors", body=body))

    # Trajectories.

    def trajectories(self, *, domain: str = "") -> List[Trajectory]:
        out = self.request("GET", "/v1/trajectories", query={"domain": domain})
        return [Trajectory.from_dict(x) for x in out.get("trajectories") or []]

    def trajectory(self, id: str, domain: str = "") -> Trajectory:
        return Trajectory.from_dict(self.request("GET", "/v1/trajectories/" + _seg(id), query={"domain": domain}))

    def record_trajectory(self, domain: str, goal: str, steps: Sequence[Union[Step, JSON]], *,
                          duration_ms: int = 0, run_id: str = "") -> Trajectory:
        """Records a successful run's steps (a run of the same goal template replaces it)."""
        body: JSON = {"domain": domain, "goal": goal,
                      "steps": [s.to_dict() if isinstance(s, Step) else s for s in steps]}
        if duration_ms:
            body["duration_ms"] = duration_ms
        if run_id:
            body["run_id"] = run_id
        return Trajectory.from_dict(self.request("POST", "/v1/trajectories", body=body))

    # Runs.

    def runs(self, *, domain: str = "", status: str = "", limit: Optional[int] = None, cursor: str = "") -> RunPage:
        return RunPage.from_dict(self.request("GET", "/v1/runs", query={
            "domain": domain, "status": status, "limit": limit, "cursor": cursor}))

    def run(self, id: str) -> Run:
        return Run.from_dict(self.request("GET", "/v1/runs/" + _seg(id)))

    def start_run(self, goal: str, *, start_url: str = "", domain: str = "", run_id: str = "") -> Run:
        """Registers a run (give start_url or domain); run_id is made when not given."""
        body: JSON = {"goal": goal}
        for k, v in (("start_url", start_url), ("domain", domain), ("run_id", run_id)):
            if v:
                body[k] = v
        return Run.from_dict(self.request("POST", "/v1/runs", body=body))

    def run_progress(self, id: str, *, current_url: str = "", turn_count: int = 0, summary: str = "") -> Run:
        body: JSON = {}
        for k, v in (("current_url", current_url), ("turn_count", turn_count), ("summary", summary)):
            if v:
                body[k] = v
        return Run.from_dict(self.request("POST", f"/v1/runs/{_seg(id)}/progress", body=body))

    def complete_run(self, id: str, success: bool, *, summary: str = "", final_url: str = "",
                     reason: str = "", turn_count: int = 0) -> Run:
        """Completes (success) or fails a run; its session summary is recorded too."""
        body: JSON = {"success": success}
        for k, v in (("summary", summary), ("final_url", final_url), ("reason", reason), ("turn_count", turn_count)):
            if v:
                body[k] = v
        return Run.from_dict(self.request("POST", f"/v1/runs/{_seg(id)}/complete", body=body)["run"])

    # Namespaces.

    def namespaces(self) -> List[Namespace]:
        """The namespaces of the store, with their sizes."""
        out = self.request("GET", "/v1/namespaces")
        return [Namespace.from_dict(x) for x in out.get("namespaces") or []]

    def create_namespace(self, name: str) -> bool:
        """Makes namespace name (an admin's token, or the socket); True when
        it is new, False when it existed. Naming a namespace that does not
        exist is NotFound: namespaces are made explicitly."""
        out = self.request("POST", "/v1/namespaces", body={"name": name})
        return bool(out.get("created"))


def _seg(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _qv(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
