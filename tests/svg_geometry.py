"""Reading a Graphviz SVG as a person sees it: where each node is, how big its text is.

`Geometry(svg_text)` gives the picture's width and height (in the SVG's own units, points),
every text it shows (`texts`), and per drawn node its DOT name, bounding box and texts (with
font sizes). Tests use it to
measure what issue 14 asks of the picture (X at the left edge, Q/K/V in one column, text size
when shown 880 px wide).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

_NS = {"svg": "http://www.w3.org/2000/svg"}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass
class Node:
    name: str
    left: float
    right: float
    top: float
    bottom: float
    texts: list[tuple[str, float]] = field(default_factory=list)  # (text, font size)

    @property
    def centre_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def lines(self) -> list[str]:
        return [text for text, _ in self.texts]


class Geometry:
    def __init__(self, svg: str) -> None:
        root = ET.fromstring(svg[svg.index("<svg") :])
        _, _, width, height = (float(v) for v in root.get("viewBox").split())
        self.width, self.height = width, height
        self.texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]  # all
        self.nodes: list[Node] = []
        self.clusters: list[Node] = []
        for group in root.iter("{http://www.w3.org/2000/svg}g"):
            kind = group.get("class")
            if kind not in ("node", "cluster"):
                continue
            title = group.find("svg:title", _NS)
            xs: list[float] = []
            ys: list[float] = []
            for shape in group.iter():
                tag = shape.tag.rpartition("}")[2]
                if tag == "polygon":
                    raw = shape.get("points", "")
                elif tag == "path":
                    raw = shape.get("d", "")
                elif tag == "ellipse":
                    cx, cy = float(shape.get("cx")), float(shape.get("cy"))
                    rx, ry = float(shape.get("rx")), float(shape.get("ry"))
                    xs += [cx - rx, cx + rx]
                    ys += [cy - ry, cy + ry]
                    continue
                else:
                    continue
                if shape.get("fill") not in (None, "none") or shape.get("stroke") not in (
                    None,
                    "none",
                    "transparent",
                ):
                    numbers = [float(n) for n in _NUMBER.findall(raw)]
                    xs += numbers[0::2]
                    ys += numbers[1::2]
            texts = [
                (t.text or "", float(t.get("font-size", "14")))
                for t in group.iter("{http://www.w3.org/2000/svg}text")
            ]
            node = Node(
                title.text if title is not None else "", min(xs), max(xs), min(ys), max(ys), texts
            )
            (self.nodes if kind == "node" else self.clusters).append(node)
        # the graph's own translate puts (0, 0) at the top-left corner of the drawing
        transform = root.find("svg:g", _NS).get("transform", "")
        shift = re.search(r"translate\(([-\d.]+)[ ,]([-\d.]+)\)", transform)
        dx, dy = (float(shift.group(1)), float(shift.group(2))) if shift else (0.0, 0.0)
        for node in self.nodes + self.clusters:
            node.left += dx
            node.right += dx
            node.top += dy
            node.bottom += dy

    def node_with(self, line: str) -> Node:
        """The one node that has a text line equal to `line`."""
        found = [n for n in self.nodes if line in n.lines]
        assert len(found) == 1, f"{len(found)} nodes have the line {line!r}"
        return found[0]

    def nodes_with(self, pattern: str) -> list[Node]:
        return [n for n in self.nodes if any(re.search(pattern, t) for t in n.lines)]

    def smallest_node_text(self) -> float:
        return min(size for node in self.nodes for _, size in node.texts)

    def px_at(self, shown_width: float, size: float) -> float:
        """How many pixels a text of `size` units is when the picture is `shown_width` px wide."""
        return size * shown_width / self.width
