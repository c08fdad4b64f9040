"""Synthetic benchmark sets drawn from their published definitions (``[generated.<family>]`` in
the registry): ``load("g2_8_50")`` draws the set from the registry's seed, the same bits every
time, and needs no file.

The G2 sets of the clustering basic benchmark (Fränti and Sieranoja 2018; the benchmark's page,
cs.uef.fi/sipu/datasets, gives Fränti, Mariescu-Istodor and Zhong 2016 as their reference) are
defined as two Gaussian clusters of 1024 points each in d dimensions, centred at
(500, ..., 500) and (600, ..., 600), with the same standard deviation sd in every coordinate;
the published grid is d = 1, 2, 4, ..., 1024 and sd = 10, 20, ..., 100, and the files list
cluster 1's points first. The page's description of the generator draws standard normal pairs
with the Box-Muller method from the C library's ``rand()``, and the files hold integer
coordinates.

What :func:`g2` generates is *our* draw from that definition, not the original files (which
the registry does not hold): numpy's ``Generator.standard_normal`` instead of Box-Muller on
``rand()``, each coordinate rounded to the nearest integer as the files store integers
(whether the original rounded or truncated is not stated), nothing clipped. The rows are
cluster 1's 1024 points then cluster 2's, as in the files, and ``target`` holds the cluster
(0, 1). The public bounds come from the definition, never from the draw: every coordinate in
[500 - tail sd, 600 + tail sd] (the registry's ``tail``); a value outside is clipped, and
counted, only when the set is scaled (:meth:`dpkmeans.data.Dataset.scaled`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from dpkmeans.data.dataset import Dataset, Provenance
from dpkmeans.data.errors import PaperColumnError, RegistryError
from dpkmeans.data.registry import GeneratedSpec

__all__ = ["G2_CENTRES", "G2_CLUSTER_SIZE", "GENERATORS", "g2", "load_generated"]

#: The two centres of every G2 set (each coordinate).
G2_CENTRES = (500.0, 600.0)
#: Points per G2 cluster (2048 in all).
G2_CLUSTER_SIZE = 1024


def _positive(params: Mapping[str, object], key: str, kind: type) -> float:
    value = params.get(key)
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or (kind is int and int(value) != value) or not value > 0):
        what = "a positive integer" if kind is int else "a positive number"
        raise RegistryError(f"G2 parameter {key!r} must be {what}, got {value!r}")
    return float(value)


def g2(d: int, sd: float, rng: np.random.Generator, *, tail: float = 5.0) -> Dataset:
    """One G2 set: 1024 points around (500, ..., 500), then 1024 around (600, ..., 600).

    Parameters
    ----------
    d : int
        The dimension (the published grid: 1, 2, 4, ..., 1024).
    sd : float
        The standard deviation of every coordinate (the published grid: 10, 20, ..., 100).
    rng : numpy.random.Generator
        The stream the set is drawn from.
    tail : float, default 5.0
        The public bounds are [500 - tail sd, 600 + tail sd] in every coordinate.

    Returns
    -------
    Dataset
        2048 rows of integer-valued coordinates (floats), unclipped; ``target`` the cluster.

    Raises
    ------
    RegistryError
        If d is not a positive integer or sd or tail is not positive.
    """
    params = {"d": d, "sd": sd, "tail": tail}
    d = int(_positive(params, "d", int))
    sd = _positive(params, "sd", float)
    tail = _positive(params, "tail", float)
    labels = np.repeat(np.arange(2), G2_CLUSTER_SIZE)
    centres = np.asarray(G2_CENTRES)[labels][:, None]
    X = np.rint(centres + sd * rng.standard_normal((labels.size, d)))
    low, high = G2_CENTRES[0] - tail * sd, G2_CENTRES[1] + tail * sd
    why = f"G2 definition: centres 500 and 600 +/- {tail:g} sd (sd = {sd:g}), not the draw"
    return Dataset(
        name=f"g2_{d}_{sd:g}",
        X=X,
        feature_names=tuple(f"x{j + 1}" for j in range(d)),
        bounds=np.tile([low, high], (d, 1)),
        bounds_why=(why,) * d,
        provenance=Provenance(source="generated", rows_in_file=int(labels.size)),
        target=labels,
        target_name="cluster",
        target_levels=("centre 500", "centre 600"),
        metadata={"bounds_mode": "public", "scaling": None, "public_rows": int(labels.size),
                  "true_centers": np.tile(np.asarray(G2_CENTRES)[:, None], (1, d)), "std": sd},
    )


def _g2(params: Mapping[str, int | float], rng: np.random.Generator) -> Dataset:
    unknown = sorted(set(params) - {"d", "sd", "tail"})
    if unknown:
        raise RegistryError(f"the G2 generator takes d, sd and tail, not {unknown}")
    return g2(params.get("d"), params.get("sd"), rng,  # type: ignore[arg-type]
              tail=params.get("tail", 5.0))


#: The generators the registry's ``generator`` key names.
GENERATORS: Mapping[str, Callable[[Mapping[str, int | float], np.random.Generator], Dataset]] = {
    "g2": _g2}


def load_generated(spec: GeneratedSpec, columns: Sequence[str] | None = None) -> Dataset:
    """Draw the set ``spec`` from its seed (:attr:`GeneratedSpec.entropy`).

    Parameters
    ----------
    spec : GeneratedSpec
        A registry entry (``get_registry().generated[name]``).
    columns : sequence of str or None, default None
        A subset of the set's columns (``x1``, ``x2``, ...); None for all.

    Returns
    -------
    Dataset
        Named ``spec.name``; its provenance names the generator, the source and the seed.

    Raises
    ------
    RegistryError
        If the generator is unknown or its parameters are invalid.
    PaperColumnError
        If a column is unknown.
    """
    make = GENERATORS.get(spec.generator)
    if make is None:
        raise RegistryError(f"generated.{spec.family}: unknown generator {spec.generator!r} "
                            f"(known: {', '.join(GENERATORS)})")
    rng = np.random.default_rng(np.random.SeedSequence(spec.entropy))
    ds = make(spec.params, rng)
    if isinstance(columns, str):
        raise TypeError("columns must be a sequence of column names, not a single string")
    names = list(ds.feature_names)
    chosen = list(columns) if columns is not None else names
    unknown = [c for c in chosen if c not in names]
    if unknown or not chosen:
        raise PaperColumnError(f"{spec.name!r} has no columns {unknown}; its columns are "
                               f"x1 ... x{len(names)}")
    idx = [names.index(c) for c in chosen]
    params = ", ".join(f"{k} = {v:g}" for k, v in spec.params.items())
    provenance = Provenance(
        source=f"generated by dpkmeans.data.generated ({spec.generator}: {params}; seed "
               f"{spec.seed}) from the published definition, not the original files",
        rows_in_file=ds.n_samples,
        notes=(spec.title, spec.source, *((spec.note,) if spec.note else ())),
    )
    return Dataset(
        name=spec.name, X=ds.X[:, idx], feature_names=tuple(chosen), bounds=ds.bounds[idx],
        bounds_why=tuple(ds.bounds_why[i] for i in idx), provenance=provenance,
        target=ds.target, target_name=ds.target_name, target_levels=ds.target_levels,
        metadata=dict(ds.metadata, true_centers=np.asarray(ds.metadata["true_centers"])[:, idx],
                      generator=spec.generator, params=dict(spec.params), seed=spec.seed))
