"""Shared test settings."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Preflights' own suite runs in a venv of its own (`make preflights-suite`); its plugin routes
# Preflights' mock to the engine process-wide, so it is never imported (doctests) here.
collect_ignore = ["preflights_suite"]
