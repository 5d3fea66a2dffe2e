"""``python -m benchmarks.cli_shortcuts``: what the command line's two start-up shortcuts buy.

Each shortcut must pay at least 10 % of a command's CPU time (docs/performance.md) or go:

- the collector switch (``__main__.collector_settled``): a one-shot command runs with the garbage
  collector off and frozen at exit; against the same command with the collector as it is;
- the lazy command group (``cli._LazyGroup``): a command's module is imported when it runs;
  against every command module imported first, as a plain typer group would.

Each variant is a fresh interpreter, timed in CPU (user + system) so a loaded machine's waits do
not count; the variants alternate within each round, and the medians of the rounds are compared.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

SHIPPED = (
    "import sys; sys.argv[0] = 'preflight-fsm'\nfrom preflight_fsm.__main__ import main; main()"
)
COLLECTOR_ON = (
    "import sys; sys.argv[0] = 'preflight-fsm'\nfrom preflight_fsm.cli import main; main()"
)
EAGER = (
    "import sys; sys.argv[0] = 'preflight-fsm'\nimport gc; gc.disable()\n"
    "import preflight_fsm.cli as cli\n"
    "for module in cli._COMMAND_MODULES: cli._import(module)\n"
    "cli.main()\ngc.freeze()"
)
VARIANTS = {"shipped": SHIPPED, "collector on": COLLECTOR_ON, "commands eager": EAGER}
COMMANDS = {"--help": ["--help"], "start": ["start", "Add OAuth login"]}


def _cpu_ms(code: str, args: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return used * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PREFLIGHT_FSM_STORE=f"sqlite:///{tmp}/sessions.db")
        for command, args in COMMANDS.items():
            times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
            for _ in range(rounds):
                for variant, code in VARIANTS.items():
                    times[variant].append(_cpu_ms(code, args, env))
            shipped = statistics.median(times["shipped"])
            for variant, measured in times.items():
                median = statistics.median(measured)
                print(
                    f"{command:8} {variant:16} {median:7.1f} ms CPU"
                    f"  ({median / shipped - 1:+6.1%} against shipped)"
                )


if __name__ == "__main__":
    main()
