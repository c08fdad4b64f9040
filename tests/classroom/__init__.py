"""Tests of dpkmeans_classroom: making, keys, grading, the sandbox."""
