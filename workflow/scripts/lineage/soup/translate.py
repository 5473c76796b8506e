"""One model in two checkpoint layouts: the first parent's tensors as byte ranges of another parent's.

A soup writes the first parent's layout. A parent in another layout of the same model (the Hub's
`backbone.*` with one tensor per expert, against transformers' `model.*` with the experts merged)
is read through a translation: each of the first parent's tensors becomes the list of byte ranges
of the other parent's tensors that hold the same values, in order. Both layouts are resolved by
lineage.checkpoints.layouts from transformers' own conversion rules, so a merged expert tensor is the
concatenation of its experts' bytes and an expert is a row range of the merged tensor. The soup
then averages like with like, reading each parent's own bytes once.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage.checkpoints.format import shown_dtype
from lineage.checkpoints.layouts import LayoutError, Piece, resolve_layout
from lineage.checkpoints.load import meta_model, tied_aliases
from lineage.soup.checks import Parent, SoupError


@dataclass(frozen=True)
class Segment:
    """Bytes [offset, offset + nbytes) of the other parent's tensor `name`."""

    name: str
    offset: int
    nbytes: int


def translation(first: Parent, other: Parent) -> dict[str, list[Segment]] | None:
    """{first's tensor name: the segments of `other` that hold it}; None when they are not one model in two
    layouts (lineage.soup.checks.check_tensors then names the differences)."""
    model = meta_model(first.directory)
    skip = list(tied_aliases(model))
    try:
        layouts = [
            resolve_layout(p.directory, {n: e.shape for n, (_, e) in p.layout.items()}, model, skip=skip)
            for p in (first, other)
        ]
    except LayoutError:
        return None
    segments: dict[str, list[Segment]] = {}
    for target, mine in layouts[0].pieces.items():
        theirs = layouts[1].pieces[target]
        rows = _rows(first, mine)
        for name, (begin, end) in rows.items():
            segments[name] = _segments(other, theirs, begin, end)
            _check_dtype(first, other, name, segments[name])
    return segments


def _rows(parent: Parent, piece: Piece) -> dict[str, tuple[int, int]]:
    """Each checkpoint tensor of `piece` in `parent` as its row range [begin, end) of the model tensor."""
    if piece.stacked:
        return {name: (row, row + 1) for row, name in enumerate(piece.sources)}
    shape = parent.layout[piece.sources[0]][1].shape
    return {piece.sources[0]: (0, shape[0] if shape else 1)}


def _segments(parent: Parent, piece: Piece, begin: int, end: int) -> list[Segment]:
    """Rows [begin, end) of a model tensor as byte ranges of `parent`'s tensors."""
    if piece.stacked:
        return [Segment(name, 0, parent.layout[name][1].nbytes) for name in piece.sources[begin:end]]
    entry = parent.layout[piece.sources[0]][1]
    rows = entry.shape[0] if entry.shape else 1
    row_bytes = entry.nbytes // rows
    return [Segment(piece.sources[0], begin * row_bytes, (end - begin) * row_bytes)]


def _check_dtype(first: Parent, other: Parent, name: str, segments: list[Segment]) -> None:
    mine = first.layout[name][1]
    for segment in segments:
        theirs = other.layout[segment.name][1]
        if theirs.dtype != mine.dtype:
            raise SoupError(
                f"{name} of {first.name} is {shown_dtype(mine.dtype)} but {segment.name} of {other.name} is "
                f"{shown_dtype(theirs.dtype)}; only checkpoints of one dtype per tensor can be averaged"
            )
    if sum(s.nbytes for s in segments) != mine.nbytes:
        raise SoupError(f"{name} of {first.name} and its tensors in {other.name} differ in size")
