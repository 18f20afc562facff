"""A small rule brain for the tank — a worked example of your own brain (docs/brains.md).

Run it::

    python run.py live --brain examples/rule_brain.py:RuleBrain            # in the window
    python run.py live --headless --ticks 500 --brain examples/rule_brain.py:RuleBrain

or half the tank on it, half on the instinct (examples/mixed.toml)::

    python run.py live --config examples/mixed.toml

A brain is any object with ``decide(ask)``; ``ask`` is a :class:`mirofish.brains.user.Ask`
(the fish's view, energy, memories, the plans that fit …) and the answer a
:class:`~mirofish.brains.user.Decision` (or a dict / JSON string in the same shape).
This one reads the view with four rules, and says which rule fired as its thought.
"""

from __future__ import annotations

from mirofish.brains.user import Ask, Decision


class RuleBrain:
    name = "rules"  # shown in the follow panel and counted under this name

    def decide(self, ask: Ask) -> Decision:
        food = "F" in ask.view
        company = any(ch in ask.view for ch in "^v<>")
        if ask.energy < 15 and not food:
            return Decision(goal="rest", until=30, ticks=40, thought="too tired to swim: rest")
        if food and "forage" in ask.plans:
            return Decision(goal="forage", ticks=30, thought="food in view: go eat")
        if company and ask.energy > 40 and "school" in ask.plans:
            return Decision(goal="school", ticks=60, thought="others near and fed: swim with them")
        if "explore" in ask.plans and ask.directions:
            way = ask.heading if ask.heading in ask.directions else ask.directions[0]
            return Decision(goal="explore", direction=way, ticks=25, thought=f"open water {way}: look around")
        return Decision(goal="forage", ticks=30, thought="nothing better to do")

    def answer(self, question: dict, ask: Ask):
        """A survey's question (``run.py survey``): answered by the same rules, from the same ask.
        ``question`` has ``id``, ``kind`` (text, likert, choice, number), ``text``, ``options``,
        ``labels``, ``min``, ``max``; the answer is read as a model's is (a Likert score 1-5, one
        of the options, a number, or text)."""
        company = sum(ch in "^v<>" for ch in ask.view)
        kind, options = question["kind"], question["options"]
        if kind == "likert":  # how safe, how good: more company, more energy, higher
            return 1 + min(4, company + int(ask.energy >= 50))
        if kind == "number":
            return max(question["min"], min(question["max"], ask.energy))
        if kind == "choice":
            if set(options) == {"yes", "no"}:
                return "yes" if company else "no"
            decided = self.decide(ask)
            way = decided.direction if decided.goal == "explore" else "stay" if decided.goal == "rest" else ask.heading
            return way if way in options else options[0]
        return f"{self.decide(ask).thought}, with {company} fish in view"
