"""The estimators users call: :class:`~dpkmeans.api.estimators.DPKMeans`,
:class:`~dpkmeans.api.mixed_estimator.DPKPrototypes` and the catalogue of algorithms.
"""
