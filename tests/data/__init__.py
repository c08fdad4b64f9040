"""Tests of dpkmeans.data: the registry, loading, downloads, synthetic data, the datasets CLI."""
