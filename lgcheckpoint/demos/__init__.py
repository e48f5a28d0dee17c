"""Small, realistic graphs that the course and the viewers use as examples."""

from lgcheckpoint.demos.approval_agent import build_approval_agent

__all__ = ["build_approval_agent"]
