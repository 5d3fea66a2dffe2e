"""Adapters that plug preflight-fsm into other products.

``preflight_fsm.integrations.preflights`` needs the optional extra: ``pip install
'preflight-fsm[preflights]'``. Nothing here is imported eagerly, so the core package never
depends on an integration's product.
"""
