"""Flat (legacy 2d) shapes: $box, $center and $polygon on coordinate pairs, as mongod tests them.

These are plane computations on doubles (shapes.cpp), kept exactly as mongod decides boundary
cases: a box and a circle include their boundary; a polygon includes its vertices and its
horizontal and vertical edges, and decides other boundary points by the parity of a rightward
ray (so, as in mongod, a point on a slanted left edge is outside). A library polygon test
(e.g. shapely's `covers`) would disagree with mongod on those boundary points.
"""
from __future__ import annotations

import math


def distance(ax: float, ay: float, bx: float, by: float) -> float:
    return math.hypot(ax - bx, ay - by)


def distance_within(ax: float, ay: float, bx: float, by: float, radius: float) -> bool:
    """mongod's distanceWithin: compares squared distances, as the 2d index does."""
    dx, dy = ax - bx, ay - by
    return dx * dx + dy * dy <= radius * radius


def box_from_corners(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float, float, float]:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))


def box_contains_point(box: tuple[float, float, float, float], x: float, y: float,
                       fudge: float = 0.0) -> bool:
    min_x, min_y, max_x, max_y = box
    return x + fudge >= min_x and x <= max_x + fudge and y + fudge >= min_y and y <= max_y + fudge


def boxes_intersect(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def polygon_contains_point(vertices: list[tuple[float, float]], x: float, y: float) -> bool:
    """Point in a flat polygon (closed implicitly), with mongod's boundary decisions."""
    inside = False
    n = len(vertices)
    for i in range(n):
        x1, y1 = vertices[i]
        x2, y2 = vertices[(i + 1) % n]
        if (x, y) == (x1, y1) or (x, y) == (x2, y2):
            return True
        if y1 == y2 == y and min(x1, x2) <= x <= max(x1, x2):
            return True
        if min(y1, y2) < y <= max(y1, y2) and x <= max(x1, x2) and y1 != y2:
            if x1 == x2:
                if x == x1:
                    return True
                inside = not inside
            elif x <= (y - y1) * (x2 - x1) / (y2 - y1) + x1:
                inside = not inside
    return inside


def polygon_bounds(vertices: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    xs = [v[0] for v in vertices]
    ys = [v[1] for v in vertices]
    return (min(xs), min(ys), max(xs), max(ys))


def box_point_distance(box: tuple[float, float, float, float], x: float, y: float) -> float:
    """Shortest flat distance from a point to a box (0 inside)."""
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return math.hypot(dx, dy)
