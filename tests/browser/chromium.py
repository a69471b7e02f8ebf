"""Which Chromium the browser tests drive: Debian's headless shell when it is there, else Debian's chromium.

The headless shell (package chromium-headless-shell, Chromium's "old headless" mode) renders with the same Blink
as the browser a tablet runs, without the browser's own UI: on this project's 2-core build machine a fresh page
costs it about a third of the CPU the full browser's headless mode takes (0.34 s against 1.05 s for a new
context, its page and the table page loaded), and the browser tests were half of the suite's CPU.
"""

import shutil

CHROMIUM = (shutil.which("chromium-headless-shell") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
