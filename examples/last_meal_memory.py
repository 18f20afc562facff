"""A memory of your own (docs/memory.md): each fish remembers only the last place it ate and who
was near it then — nothing else reaches its prompt.

    python run.py live --headless --brain llm --base-url … --model NAME --memory examples/last_meal_memory.py:LastMeal

It is told every tick's events (``remember``) and asked for the prompt's lines at each decision
(``recall``); ``get_state``/``set_state`` let a rewind keep it.
"""

from __future__ import annotations

from typing import Any

ATE, NEIGHBOURS = 1, 7  # mirofish.fish.memory's event codes (ate food; fish nearby)


class LastMeal:
    name = "last meal"

    def __init__(self, n_fish: int):
        self.meal: dict[int, tuple[int, int]] = {}  # fish -> (tick, energy after the meal)
        self.near: dict[int, int] = {}  # fish -> fish nearby when it last counted them
        self.company_at_meal: dict[int, int] = {}

    def remember(self, events: Any) -> None:
        for k in range(len(events)):
            fish, code, arg = int(events.fish[k]), int(events.code[k]), int(events.arg[k])
            if code == NEIGHBOURS:
                self.near[fish] = arg
            elif code == ATE:
                self.meal[fish] = (int(events.tick[k]), arg)
                self.company_at_meal[fish] = self.near.get(fish, 0)

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        if fish not in self.meal:
            return ["I have not eaten yet"], []
        when, energy = self.meal[fish]
        company = self.company_at_meal.get(fish, 0)
        return [f"t{when} I last ate (energy {energy}), {tick - when} ticks ago, "
                f"with {company or 'no'} fish near me"], []

    def get_state(self) -> Any:
        return {"meal": dict(self.meal), "near": dict(self.near), "company": dict(self.company_at_meal)}

    def set_state(self, state: Any) -> None:
        self.meal, self.near, self.company_at_meal = dict(state["meal"]), dict(state["near"]), dict(state["company"])
