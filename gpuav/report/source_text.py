"""Find the text of a source line in a shader's embedded source (OpSource, DebugSource).

The embedded text is what the compiler saw after including files, so a line number from
OpLine cannot index it directly. Seed 000's rule: take the ``#line`` directive closest below
the wanted line whose file matches, and count from it. We track the file a directive without
a name continues (the C preprocessor's rule), so ``#line 300`` after ``#line 40 "cube.frag"``
still belongs to cube.frag; a numeric second argument is a source-string number, not a name,
and glslang keeps the main file in OpLine for it. Unlike the 2019 layer, a text with no
``#line`` at all is indexed directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIRECTIVE = re.compile(r'^\s*#\s*line\s+(\d+)(?:\s+(?:"([^"]*)"|\d+))?\s*(?://.*)?$')


@dataclass(frozen=True)
class LineDirective:
    position: int  # 0-based index of the directive's own line in the text
    line: int  # the number the next line gets
    file: str | None  # named by the directive, or the file it continues


@dataclass(frozen=True)
class SourceText:
    """One embedded source: its lines and its ``#line`` directives, parsed once."""

    file: str | None
    lines: tuple[str, ...]
    directives: tuple[LineDirective, ...]

    @classmethod
    def parse(cls, file: str | None, text: str) -> SourceText:
        lines = tuple(text.split("\n"))
        directives: list[LineDirective] = []
        current = file
        for position, line in enumerate(lines):
            if "line" not in line:
                continue
            match = _DIRECTIVE.match(line)
            if match is None:
                continue
            if match.group(2) is not None:
                current = match.group(2)
            directives.append(LineDirective(position, int(match.group(1)), current))
        return cls(file, lines, tuple(directives))

    def line_text(self, file: str | None, line: int) -> str | None:
        """The text of ``line`` of ``file``, or None when this source cannot tell."""
        if line < 1:
            return None
        if not self.directives:
            if not _same_file(self.file, file):
                return None
            return self._at(line - 1)
        best: LineDirective | None = None
        for directive in self.directives:
            wanted = directive.line <= line and _same_file(directive.file, file)
            if wanted and (best is None or directive.line >= best.line):
                best = directive
        if best is None:
            return None
        return self._at(best.position + 1 + line - best.line)

    def _at(self, index: int) -> str | None:
        if 0 <= index < len(self.lines):
            text = self.lines[index]
            # A directive there means the wanted line is not in this text.
            return None if _DIRECTIVE.match(text) else text.rstrip("\r")
        return None


def _same_file(known: str | None, wanted: str | None) -> bool:
    return known is None or wanted is None or known == wanted
