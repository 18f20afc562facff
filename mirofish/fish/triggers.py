"""Triggers: the reason a fish asks for a decision (a request carries the first that applies).

The first five are the source design's action-mode triggers; the rest are plan mode's: a plan
ended, failed, or something salient happened (docs/design.md §3). The last two are a plan type's
own events, its ``ends`` and ``fails`` predicates (:mod:`mirofish.fish.formula`); the last, a
hunter of its group came into view of a fish whose group flees (``World.hunted``).
"""

(T_LOW_ENERGY, T_ACTION_FAILED, T_FOOD_ROSE, T_NEIGHBOURS, T_TIMEOUT, T_ATE, T_ENERGY_REACHED, T_HORIZON,
 T_STUCK, T_FOOD_GONE, T_LOST_COMPANY, T_HUNGRY_FOOD, T_FOUND_COMPANY, T_CROWDED, T_PLAN_DONE,
 T_PLAN_FAILED, T_HUNTER) = range(17)
TRIGGER_NAMES = ("low_energy", "action_failed", "food_rose", "neighbours_changed", "timeout", "ate",
                 "energy_reached", "plan_horizon", "stuck", "food_gone", "lost_company",
                 "hungry_food_in_view", "found_company", "crowded", "plan_done", "plan_failed",
                 "hunter_in_view")  # (the last: only a fish whose group flees, docs/species.md)


def trigger_name(code: int) -> str:
    """The trigger's name ("event" for a code that names none)."""
    return TRIGGER_NAMES[code] if 0 <= code < len(TRIGGER_NAMES) else "event"


def ended_early(code: int) -> str | None:
    """What ended a plan before its horizon, worded ("found company"), from the trigger code that
    was raised when the next decision replaced it; None when it ran to its horizon or nothing was
    raised (a timeout, the first plan, a fork's or a person's choice)."""
    if code < 0 or code == T_HORIZON:
        return None
    return trigger_name(code).replace("_", " ")
