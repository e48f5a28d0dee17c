"""Small, realistic graphs that the course and the viewers use as examples."""

from lgcheckpoint.demos.approval_agent import build_approval_agent
from lgcheckpoint.demos.travel_planner import build_travel_planner

__all__ = ["build_approval_agent", "build_travel_planner"]
