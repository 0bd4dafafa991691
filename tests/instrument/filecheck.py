"""A small FileCheck: ``CHECK:`` lines match in order, ``CHECK-NEXT:`` on the very next line,
``CHECK-NOT:`` nowhere between the previous match and the next one. Patterns are plain text
in which ``{{...}}`` is a regular expression; a failure shows the whole disassembly."""

from __future__ import annotations

import re

_DIRECTIVE = re.compile(r"^\s*;?\s*(CHECK|CHECK-NEXT|CHECK-NOT):\s?(.*)$")


def _regex(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"\{\{(.*?)\}\}", pattern.strip())
    return re.compile("".join(part if k % 2 else re.escape(part) for k, part in enumerate(parts)))


def filecheck(text: str, checks: str) -> None:
    lines = text.splitlines()
    position = 0
    pending_not: list[tuple[str, re.Pattern[str]]] = []
    for raw in checks.splitlines():
        match = _DIRECTIVE.match(raw)
        if match is None:
            continue
        kind, pattern = match.group(1), match.group(2)
        regex = _regex(pattern)
        if kind == "CHECK-NOT":
            pending_not.append((pattern, regex))
            continue
        if kind == "CHECK-NEXT":
            found = position if position < len(lines) and regex.search(lines[position]) else None
        else:
            found = next((k for k in range(position, len(lines)) if regex.search(lines[k])), None)
        if found is None:
            raise AssertionError(f"{kind}: {pattern!r} not found after line {position}\n{text}")
        for not_pattern, not_regex in pending_not:
            for k in range(position, found):
                if not_regex.search(lines[k]):
                    raise AssertionError(f"CHECK-NOT: {not_pattern!r} matched line {k}\n{text}")
        pending_not = []
        position = found + 1
    for not_pattern, not_regex in pending_not:
        for k in range(position, len(lines)):
            if not_regex.search(lines[k]):
                raise AssertionError(f"CHECK-NOT: {not_pattern!r} matched line {k}\n{text}")
