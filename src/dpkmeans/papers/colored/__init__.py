"""Colored (optimal-covariance) Gaussian noise for k-means centroids (Ravi, Scaglione, Peisert,
arXiv:2111.07850, 2021; book chapter 9).

- :mod:`dpkmeans.colored`: the mechanism's math (gamma, Delta sets, covariances, the check);
- :mod:`.variants`: the paper as published (CEDS) and corrected, as engine configurations.
"""
