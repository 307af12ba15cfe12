"""Adding memory to a browser-use style agent loop.

An agent loop of browser-use's shape (observe, ask the model, act, repeat)
gets three hooks:

- before each step, ``before_step`` fetches what memory holds for the page
  and the goal (lessons, facts, selectors, a recorded run of a similar task)
  as text for the prompt;
- after an action fails, ``after_failure`` fetches the tips for that error;
- at the end, ``finish`` sends the run's action log to be learned from,
  records the trajectory when the run succeeded, and completes the run.

Run it against a server (engine serve) with a scripted stand-in for the
browser and the model:

    python3 examples/browser_use_loop.py unix://$HOME/.local/share/engine/engine.sock

With browser-use itself, call the hooks from its step callbacks (its
``on_step_start`` and ``on_step_end``, or your own loop around
``agent.step()``): put ``before_step``'s text in the task's extra system
message, and ``after_failure``'s tips in the next step's message.
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from engine_memory import Client, Step  # noqa: E402


@dataclass
class MemoryHooks:
    """Memory for one run of an agent: call the hooks from the loop."""

    mem: Client
    goal: str
    start_url: str
    run_id: str = ""
    actions: List[Dict[str, Any]] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)

    def start(self) -> None:
        run = self.mem.start_run(self.goal, start_url=self.start_url, run_id=self.run_id)
        self.run_id = run.run_id

    def before_step(self, url: str, last_command: str = "", last_error: str = "") -> str:
        """The memory text for the prompt of the next step."""
        return self.mem.context(url, self.goal, budget=1500, last_command=last_command, last_error=last_error).text

    def after_action(self, url: str, action: str, ref: str, ok: bool, error: str = "",
                     role: str = "", name: str = "", selector: str = "", value: str = "") -> List[str]:
        """Logs one action; after a failure, returns the tips memory has for its error."""
        entry: Dict[str, Any] = {"step": len(self.actions) + 1, "action": action, "ref": ref, "ok": ok, "url": url}
        if error:
            entry["error"] = error
        self.actions.append(entry)
        if ok:
            self.steps.append(Step(action, role=role, name=name, selector=selector, value=value, url=url, verified=True))
            return []
        domain = urllib.parse.urlsplit(url).hostname or ""
        return [t.lesson for t in self.mem.recall_error(f"{action} {ref}", error, domain=domain)]

    def finish(self, success: bool, summary: str = "") -> Dict[str, Any]:
        """Learns from the action log, records the trajectory of a success, completes the run."""
        domain = urllib.parse.urlsplit(self.start_url).hostname or ""
        learned = self.mem.learn(self.actions, domain=domain)
        trajectory: Optional[str] = None
        if success and self.steps:
            trajectory = self.mem.record_trajectory(domain, self.goal, self.steps, run_id=self.run_id).id
        run = self.mem.complete_run(self.run_id, success, summary=summary)
        return {"learned": len(learned), "trajectory": trajectory, "status": run.status}


def scripted_run(mem: Client, run_id: str = "") -> Dict[str, Any]:
    """One run of a scripted agent on a shop: the fill of a read-only field fails, typing works."""
    hooks = MemoryHooks(mem, goal="log in to shop.example", start_url="https://shop.example/login", run_id=run_id)
    hooks.start()
    url = hooks.start_url
    prompt = hooks.before_step(url)  # the agent's prompt gets this text
    tips = hooks.after_action(url, "fill", "e3", ok=False, error="element is read-only")
    prompt = hooks.before_step(url, last_command="fill e3", last_error="element is read-only")
    hooks.after_action(url, "type", "e3", ok=True, role="textbox", name="Email", selector="#email", value="me@shop.example")
    out = hooks.finish(True, summary="logged in")
    out["prompt"], out["tips"] = prompt, tips
    return out


if __name__ == "__main__":
    address = sys.argv[1] if len(sys.argv) > 1 else None
    first = scripted_run(Client(address))
    print(f"first run: learned {first['learned']} lesson(s), trajectory {first['trajectory']}, run {first['status']}")
    second = scripted_run(Client(address))
    print("second run, after the failure, memory said:")
    for tip in second["tips"]:
        print("  -", tip)
