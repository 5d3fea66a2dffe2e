"""The answer page: a session's current turn as a server-rendered web page, reached by the
person with a one-turn link (docs/web.md)."""

from preflight_fsm.web.app import page_app, page_routes
from preflight_fsm.web.links import LinkBook
from preflight_fsm.web.listener import PageListener
from preflight_fsm.web.page import PAGE_PATH, AnswerPage, PageReply

__all__ = [
    "PAGE_PATH",
    "AnswerPage",
    "LinkBook",
    "PageListener",
    "PageReply",
    "page_app",
    "page_routes",
]
