"""Adapters that plug preflight-fsm into other products.

``preflight_fsm.integrations.preflights`` needs the optional extra ``preflights`` (``pip install
-e '.[preflights]'`` in a clone; a missing extra's error names the command for this
installation, ``preflight_fsm.extras``), its ``agent_tools`` also the extra ``mcp``. Nothing here
is imported eagerly, so the core package never depends on an integration's product.
"""
