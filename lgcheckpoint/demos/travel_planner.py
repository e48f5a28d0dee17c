"""The tour's travel planner as a demo graph: a fan-out, a join, an approval interrupt and a loop.

``lgcheckpoint studio travel_planner`` opens it in the studio with ``EXAMPLE_INPUT``.
Next: ``lgcheckpoint/tour.py`` (the graph itself).
"""

from lgcheckpoint.tour import build_tour_graph as build_travel_planner

EXAMPLE_INPUT = {"destination": "Kyoto", "days": 3}

__all__ = ["EXAMPLE_INPUT", "build_travel_planner"]
