"""Reliability and security, measured: crash/resume, concurrency, hostile data, bad input."""
