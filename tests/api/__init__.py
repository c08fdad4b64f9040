"""Tests of dpkmeans.api: DPKMeans, DPKPrototypes and what they may print."""
