"""Tests of dpkmeans.engine: the loop, flaws, categorical modes, schedules."""
