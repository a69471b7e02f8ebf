"""Checks shared by the games' tests."""


def json_safe(value) -> bool:
    """True when value is made only of what JSON carries (what a view must be)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_safe(v) for k, v in value.items())
    return False
