"""Tests of dpkmeans.assignments: making, keys, grading, the sandbox."""
