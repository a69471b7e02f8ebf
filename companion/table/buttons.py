"""What the physical button panel does in each game.

The panel is small: `roll`, `next` (also wired as `step`/`select`), `confirm` and a
long press on any button for undo. Each game offers a list of *choices* (the legal
moves, the reachable rondel spaces, …); `next` walks through them, `confirm` plays
the highlighted one. A press that means nothing now is refused with a message.
"""

from __future__ import annotations

from typing import Any, Callable

from companion.games.base import RuleError

NEXT_NAMES = ("next", "step", "select")
# Fair dice show a 1 this many times running about once in 10^77 throws: more means a broken die source.
RECON_THROWS = 100


def choices(game: str, view: dict) -> list[dict]:
    """[{label, action}] the buttons can cycle through in this game's current view."""
    if game == "balance_duels":
        return [{"label": m["text"], "action": {"type": "move", "move": m["move"]}} for m in view.get("moves", [])]
    if game == "imperial":
        rondel = view.get("rondel") or {}
        if view.get("phase") != "rondel" or not view.get("to_move"):
            return []
        out = []
        for opt in rondel.get("options", []):
            if opt.get("blocked") or opt.get("shortfall"):
                continue
            name = next((s["name"] for s in rondel.get("spaces", []) if s["id"] == opt["target"]), opt["target"])
            cost = f"{opt['cost']} M" if opt.get("cost") else "free"
            out.append({"label": f"{name} ({cost})",
                        "action": {"type": "rondel", "nation": view["to_move"], "target": opt["target"]}})
        return out
    listed = view.get("choices")
    if isinstance(listed, list):
        return [c for c in listed if isinstance(c, dict) and isinstance(c.get("action"), dict)]
    return []


class ButtonController:
    def __init__(self, host, roll: Callable[[], Any], dice: Callable[[int], list[int]],
                 actions: dict | None = None):
        self.host = host
        self.actions = actions or {}  # game -> {button name: action}: the config's [button_actions]
        self.roll = roll
        self.dice = dice
        self.arm = None  # an ArmLink: while it asks which move was made, the buttons answer
        self.selection = 0

    def reset(self) -> None:
        self.selection = 0

    def current(self) -> tuple[list[dict], int]:
        question = self.arm.question if self.arm is not None else None
        if question is not None:
            options = [{"label": o["label"], "answer": i} for i, o in enumerate(question["options"])]
            return options, self.selection % len(options)
        snap = self.host.snapshot()
        options = choices(snap["game"], snap["view"])
        return options, (self.selection % len(options) if options else 0)

    def press(self, name: str) -> None:
        """Raises RuleError with the reason when the press means nothing now."""
        if name == "roll":
            if self.host.game == "balance_duels":
                self.roll()
            elif self.host.game == "risk":
                self._risk_battle()
            else:
                raise RuleError(f"{self.host.engine.title} rolls its dice on the page")
            return
        if name == "undo":
            self.host.undo(source="button")
            return
        mapped = self.actions.get(self.host.game, {}).get(name)
        if mapped is not None:
            self.host.act(dict(mapped), source="button")
            return
        options, index = self.current()
        if name in NEXT_NAMES:
            if not options:
                raise RuleError(self._nothing_to_choose())
            self.selection = (index + 1) % len(options)
            return
        if name == "confirm":
            if not options:
                raise RuleError(self._nothing_to_choose())
            chosen = options[index]
            if "answer" in chosen:
                self.arm.answer(chosen["answer"])
            else:
                self.host.act(chosen["action"], source="button")
            self.selection = 0
            return
        raise RuleError(f"the {name!r} button does nothing here")

    def _risk_battle(self) -> None:
        """Roll the declared attack's dice for both sides and fight that round."""
        attack = self.host.snapshot()["view"].get("attack")
        if not attack:
            raise RuleError("declare an attack on the page first; then the roll button fights each round")
        attacker_dice = self.dice(attack["attacker_dice"])
        # Recon: each protected die is thrown again until it beats 1 (the page's roll does the same).
        for i in range(min(attack.get("recon", 0), len(attacker_dice))):
            throws = 0
            while attacker_dice[i] == 1:
                throws += 1
                if throws > RECON_THROWS:
                    raise RuleError("a Recon die kept showing 1; roll on the page instead")
                attacker_dice[i] = self.dice(1)[0]
        self.host.act({"type": "battle", "attacker_dice": attacker_dice,
                       "defender_dice": self.dice(attack["defender_dice"])}, source="button")

    def hold(self, name: str) -> None:
        self.host.undo(source="button")

    def _nothing_to_choose(self) -> str:
        snap = self.host.snapshot()
        if snap["game"] == "balance_duels" and not snap["view"].get("over") and snap["view"].get("roll") is None:
            return "roll the die first"
        return "nothing to choose with the buttons now; use the page"

    def status(self) -> dict:
        options, index = self.current()
        return {"selection": index, "selection_label": options[index]["label"] if options else None,
                "choices": len(options)}
