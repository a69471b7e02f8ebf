"""The one error configuration raises; it sits below every module that checks a setting."""


class ConfigError(ValueError):
    """A configuration problem; str() is one line naming file, key and problem."""
