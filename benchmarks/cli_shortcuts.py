"""``python -m benchmarks.cli_shortcuts``: what the command line's three start-up shortcuts buy.

Each shortcut must pay at least 10 % of a command's CPU time (docs/performance.md) or go:

- the collector switch (``collector.collector_settled``): a one-shot command runs with the garbage
  collector off and frozen at exit; against the same command with the collector as it is;
- the lazy command group (``cli._LazyGroup``): a command's module is imported when it runs;
  against every command module imported first, as a plain typer group would;
- the plain coercion (``cli.coercion.plain_coercion``): parameters read without pydantic; against
  typer's own coercion, a pydantic ``TypeAdapter`` per parameter.

Each variant is a fresh interpreter, timed in CPU (user + system) so a loaded machine's waits do
not count; a variant that switches the collector off also freezes it as the command ends, even
through ``sys.exit``, as ``collector_settled`` does. The variants alternate within each round (an
``answer``'s session is started before it, untimed), Preflights' ``pf --help`` runs in every
round as the peer, and the medians of the rounds are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.workloads import SCENARIOS

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
    "try:\n    cli.main()\nfinally:\n    gc.freeze()"
)
TYPERS_COERCION = (
    "import sys; sys.argv[0] = 'preflight-fsm'\n"
    "from preflight_fsm.collector import collector_settled\n"
    "with collector_settled(sys.argv[1] if len(sys.argv) > 1 else '--help'):\n"
    "    from typer.core import _TyperParameter\n"
    "    typers = _TyperParameter.get_runtime_param\n"
    "    import preflight_fsm.cli as cli\n"
    "    _TyperParameter.get_runtime_param = typers\n"
    "    cli.main()"
)
VARIANTS = {
    "shipped": SHIPPED,
    "collector on": COLLECTOR_ON,
    "commands eager": EAGER,
    "typer's coercion": TYPERS_COERCION,
}
SCENARIO = SCENARIOS[0]
"""`make bench`'s first session: one `answer` takes it to Done (as benchmarks/cli.py runs it)."""
COMMANDS = {
    "--help": ["--help"],
    "start --help": ["start", "--help"],
    "start": ["start", SCENARIO.intention],
    "answer": [f"{key}={value}" for key, value in SCENARIO.steps[0].items()],
}


def _cpu_ms(argv: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return used * 1000


def _argv(command: str, args: list[str], code: str, env: dict[str, str]) -> list[str]:
    python = [sys.executable, "-c", code]
    if command != "answer":
        return [*python, *args]
    started = subprocess.run(
        [*python, "start", SCENARIO.intention, "--json"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [*python, "answer", json.loads(started.stdout)["session_id"], *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    arguments = parser.parse_args()
    pf = shutil.which("pf", path=str(Path(sys.executable).parent)) or shutil.which("pf")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PREFLIGHT_FSM_STORE=f"sqlite:///{tmp}/sessions.db")
        for command, args in COMMANDS.items():
            times: dict[str, list[float]] = {variant: [] for variant in arguments.variants}
            peer: list[float] = []
            for _ in range(arguments.rounds):
                if pf is not None:
                    peer.append(_cpu_ms([pf, "--help"], env))
                for variant in times:
                    times[variant].append(
                        _cpu_ms(_argv(command, args, VARIANTS[variant], env), env)
                    )
            shipped = statistics.median(times[arguments.variants[0]])
            pf_help = statistics.median(peer) if peer else float("nan")
            print(f"{command:12} {'pf --help':16} {pf_help:7.1f} ms CPU  (the peer)")
            for variant, measured in times.items():
                median = statistics.median(measured)
                print(
                    f"{command:12} {variant:16} {median:7.1f} ms CPU"
                    f"  ({median / shipped - 1:+6.1%} against {arguments.variants[0]},"
                    f" {median / pf_help:.2f} x pf --help)"
                )


if __name__ == "__main__":
    main()
