"""Table Companion: a Raspberry Pi daemon that keeps a board game's state beside the real board."""

__version__ = "0.1.0"
