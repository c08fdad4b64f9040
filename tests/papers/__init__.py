"""Tests of dpkmeans.papers: each paper's variants, study, claims and audit, and the registry."""
