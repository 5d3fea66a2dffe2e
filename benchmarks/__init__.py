"""Benchmarks of preflight-fsm against Preflights 1.1.4's hand-written mock (issue 6).

Plain scripts, not timed unit tests: ``python -m benchmarks`` prints a table and writes JSON;
``python -m benchmarks --smoke`` runs every figure on tiny counts and checks what each one
measures (the same results as a plain sequential run), never how fast it is.
"""
