"""Find the text of a source line in a shader's embedded source (OpSource, DebugSource).

The embedded text is what the compiler saw after including files, so a line number from
OpLine cannot index it directly. Seed 000's rule: take the ``#line`` directive closest below
the wanted line whose file matches, and count from it; we also require the line to fall
before the next directive, so a line number past the end of an included part is not answered
with the text of whatever follows it. We track the file a directive without
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
        lines = tuple(text.removesuffix("\n").split("\n"))
        # Lines before the first directive are numbered from 1, as if a ``#line 1`` preceded
        # them; a real directive with the same number wins over this one.
        directives = [LineDirective(-1, 1, file)]
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
        best: tuple[int, int] | None = None  # (directive line, index of the wanted line)
        ends = [directive.position for directive in self.directives[1:]] + [len(self.lines)]
        for directive, end in zip(self.directives, ends, strict=True):
            index = directive.position + 1 + line - directive.line
            # The directive must number the wanted line itself: it lies before the next one.
            wanted = directive.line <= line and index < end and _same_file(directive.file, file)
            if wanted and (best is None or directive.line >= best[0]):
                best = (directive.line, index)
        return None if best is None else self._at(best[1])

    def _at(self, index: int) -> str | None:
        if 0 <= index < len(self.lines):
            return self.lines[index].rstrip("\r")
        return None


def _same_file(known: str | None, wanted: str | None) -> bool:
    return known is None or wanted is None or known == wanted
