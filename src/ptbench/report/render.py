"""HTML pages from jinja templates with autoescape on: every string from the store, a trial dir or an agent is
escaped. The pages carry their CSS inline and a Content-Security-Policy allowing nothing but the report's own
images, so they load nothing from the network and run no script."""

from __future__ import annotations

from functools import cache

import jinja2

from ptbench.scoring.stats import Interval

MISSING = "—"


def render(template: str, **values: object) -> str:
    """Render templates/`template`; an undefined value is an error, never an empty string."""
    return _environment().get_template(template).render(**values)


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ptbench.report", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=_number, interval=_interval, share=_share, value=_value)
    return env


def _number(value: float | None, digits: int = 3) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def _interval(interval: Interval | None) -> str:
    return MISSING if interval is None else interval.text()


def _share(value: float | None) -> str:
    if value is None:
        return MISSING
    return "<1%" if 0 < value < 0.005 else f"{value:.0%}"


def _value(value: bool | int | float | None, kind: str) -> str:
    """An indicator's value: yes/no, a count, or a share."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _share(value) if kind == "share" else f"{value:g}"
