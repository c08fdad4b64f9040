"""Tests of dpkmeans.compute: block plan, kernels, Lloyd statistics, metrics, backends."""
