"""Every corrected algorithm of the book, by the name ``DPKMeans(algorithm=...)`` takes.

Each paper's record (:mod:`dpkmeans.papers.registry`) lists the corrected algorithms it adds;
the catalogue gathers them, the pure epsilon-DP ones first in the book's order, then the
(epsilon, delta) ones. Each :class:`Choice` builds the engine configuration of one algorithm
from the public inputs of a fit and says what its guarantee needs: the adjacency it is proven
under, whether it reads the number of records (public, or a noisy count the estimator pays
for), whether it is (epsilon, delta)-DP. The as-published variants are deliberately absent:
they are reachable only through their paper modules (``dpkmeans.papers.<paper>.variants``),
where the book audits them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from dpkmeans.engine.config import DPLloydConfig
from dpkmeans.engine.equal_privacy import gaussian_twin, laplace_at, scale_to
from dpkmeans.papers.registry import CatalogueEntry, FitInputs, PaperRecord, records
from dpkmeans.privacy.accounting import NEIGHBOUR_RELATIONS
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import check_delta

__all__ = ["CATALOGUE", "FORMS", "Choice", "FitInputs", "build_at", "choice", "choices",
           "forms", "loop_choices"]

#: The forms of an algorithm at a target (epsilon, delta) (book chapter 12, "Equal privacy"):
#: "pure" (its pure epsilon-DP form: delta = 0, or a pure algorithm without another form),
#: "gaussian" (its Gaussian twin, or an (epsilon, delta) algorithm calibrated under tight
#: composition), "laplace" (its Laplace form, calibrated by PLD composition) and "basic" (an
#: (epsilon, delta) algorithm as the papers account it: basic composition of its releases).
FORMS = ("pure", "gaussian", "laplace", "basic")

#: One corrected algorithm: its paper's catalogue entry itself
#: (:class:`dpkmeans.papers.registry.CatalogueEntry`), under the catalogue's name for it.
Choice = CatalogueEntry


def loop_choices() -> dict[str, Choice]:
    """The corrected algorithms that are configurations of the DP-Lloyd loop (the transcript
    audit of chapter 6, "Auditing an algorithm", scores their every noisy statistic), in the
    catalogue's order.

    Returns
    -------
    dict of str to Choice
        :func:`choices` without the standalone algorithms.

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choices, loop_choices
    >>> sorted(set(choices()) - set(loop_choices()))
    ['balcan', 'lsh']
    """
    return {name: c for name, c in choices().items() if not c.standalone}


_built: tuple[tuple[PaperRecord, ...], dict[str, Choice]] | None = None


def choices() -> dict[str, Choice]:
    """Every corrected algorithm by name, as the papers' records list them: the pure
    epsilon-DP ones first, in the book's order, then the (epsilon, delta) ones.

    Returns
    -------
    dict of str to Choice
        Built once per set of records (:func:`dpkmeans.papers.registry.records`).

    Raises
    ------
    ValueError
        If two papers offer an algorithm of the same name.

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choices
    >>> list(choices())[:2]
    ['dplloyd', 'dplloyd-impr']
    >>> choices()["colored"].needs_delta
    True
    """
    global _built
    papers = records()
    if _built is None or _built[0] is not papers:
        every = sorted((e for r in papers for e in r.algorithms),
                       key=lambda c: c.needs_delta)  # stable: the book's order within each
        names = [c.name for c in every]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two papers offer the algorithm(s) {twice}")
        _built = (papers, {c.name: c for c in every})
    return _built[1]


class _Catalogue(Mapping[str, Choice]):
    """The catalogue as the registry holds it now (a read-only mapping)."""

    def __getitem__(self, name: str) -> Choice:
        return choices()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(choices())

    def __len__(self) -> int:
        return len(choices())

    def __repr__(self) -> str:
        return f"CATALOGUE({list(self)})"


#: Every corrected algorithm by name (a live view of :func:`choices`).
CATALOGUE: Mapping[str, Choice] = _Catalogue()


def choice(name: str) -> Choice:
    """The corrected algorithm called ``name`` (a ValueError lists the names).

    Parameters
    ----------
    name : str
        A name of :data:`CATALOGUE`.

    Returns
    -------
    Choice
        The algorithm.

    Raises
    ------
    ValueError
        If no corrected algorithm has that name (an as-published variant included).

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choice
    >>> choice("dplloyd-impr").needs_n_records
    True
    >>> choice("dplloyd-paper")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of [...], got 'dplloyd-paper'; the as-published variants ...
    """
    if name not in CATALOGUE:
        raise ValueError(f"algorithm must be one of {sorted(CATALOGUE)}, got {name!r}; "
                         "the as-published variants are in dpkmeans.papers.<paper>.variants")
    return CATALOGUE[name]


def forms(entry: Choice, delta: float, neighbour: str | None = None) -> tuple[str, ...]:
    """The forms :func:`build_at` builds of ``entry`` at ``delta`` (the first is the default).

    Parameters
    ----------
    entry : Choice
        A corrected algorithm.
    delta : float
        The target delta (0: pure epsilon-DP).
    neighbour : {"add/remove", "replace"} or None, default None
        The relation it runs under (None: its own). The Gaussian twin needs add/remove.

    Returns
    -------
    tuple of str
        Members of :data:`FORMS`; empty when the algorithm has no form at that delta (an
        (epsilon, delta) algorithm at delta = 0).

    Examples
    --------
    >>> from dpkmeans.api.catalogue import choice, forms
    >>> forms(choice("dplloyd"), 0.0), forms(choice("dplloyd"), 1e-6)
    (('pure',), ('gaussian', 'laplace'))
    >>> forms(choice("colored"), 0.0), forms(choice("colored"), 1e-6)
    ((), ('gaussian', 'basic'))
    >>> forms(choice("balcan"), 1e-6), forms(choice("fastlloyd"), 1e-6)
    (('pure',), ('gaussian',))
    >>> forms(choice("di"), 1e-6), forms(choice("di"), 1e-6, "add/remove")
    (('laplace',), ('gaussian', 'laplace'))
    """
    if delta == 0:
        return () if entry.needs_delta else ("pure",)
    if entry.standalone:
        if entry.needs_delta:
            return ("gaussian", "basic") if entry.build_tight is not None else ("basic",)
        return ("pure",)  # a pure algorithm meets every delta as it is
    if entry.needs_delta:
        return ("gaussian",) if entry.tight_native else ("gaussian", "basic")
    if (neighbour or entry.neighbour) != "add/remove":
        return ("laplace",)
    return ("gaussian", "laplace")


def build_at(entry: Choice, inputs: FitInputs, delta: float, *, form: str | None = None,
             neighbour: str | None = None, prefix: Sequence[Release] = (),
             epsilon: float | None = None) -> Any:
    """The configuration of ``entry`` at (``inputs.epsilon``, ``delta``) in one of its
    :func:`forms` (book chapter 12, "Equal privacy").

    At delta = 0 the algorithm's own pure configuration. At delta > 0: the Gaussian twin
    (:func:`dpkmeans.engine.equal_privacy.gaussian_twin`) or the PLD-calibrated Laplace form
    (:func:`~dpkmeans.engine.equal_privacy.laplace_at`) of a DP-Lloyd algorithm; an (epsilon,
    delta) algorithm calibrated under tight composition ("gaussian") or as its paper accounts
    it ("basic"); a pure standalone algorithm as it is.

    Parameters
    ----------
    entry : Choice
        A corrected algorithm.
    inputs : FitInputs
        The fit's public inputs; ``inputs.delta`` is ignored (``delta`` is the target).
    delta : float
        The target delta, in [0, 1).
    form : str or None, default None
        One of ``forms(entry, delta)``; None for the first.
    neighbour : {"add/remove", "replace"} or None, default None
        Run a DP-Lloyd algorithm under this relation instead of its own (the sensitivities
        follow from it), e.g. differential identifiability under add/remove.
    prefix : sequence of Release, default ()
        Releases recorded before the run (a noisy record count), which the target covers.
    epsilon : float or None, default None
        The target epsilon of a tight form when it differs from ``inputs.epsilon`` (the
        budget the algorithm's rules read): the whole fit's, ``prefix`` included.

    Returns
    -------
    DPLloydConfig or StandaloneConfig

    Raises
    ------
    ValueError
        If the form or the relation does not apply.

    Examples
    --------
    >>> import numpy as np
    >>> from dpkmeans.api.catalogue import FitInputs, build_at, choice
    >>> inputs = FitInputs(3, 1.0, (np.zeros(10), np.ones(10)), max_iter=5, n_records=10**5)
    >>> twin = build_at(choice("dplloyd-impr"), inputs, 1e-6)
    >>> twin.noise, twin.target
    (noise_type('colored', sampler='discrete'), PrivacyCost(epsilon=1.0, delta=1e-06))
    """
    dlt = 0.0 if delta == 0 else check_delta(delta)
    available = forms(entry, dlt, neighbour)
    if not available:
        raise ValueError(f"{entry.name!r} is (epsilon, delta)-DP: it has no form at delta = 0")
    form = available[0] if form is None else form
    if form not in available:
        raise ValueError(f"form must be one of {available} for {entry.name!r} at delta={dlt:g}, "
                         f"got {form!r}")
    if neighbour is not None and neighbour not in NEIGHBOUR_RELATIONS:
        raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, got {neighbour!r}")
    if entry.standalone:
        if neighbour not in (None, entry.neighbour):
            raise ValueError(f"{entry.name!r} runs under {entry.neighbour} adjacency only")
        own = replace(inputs, delta=dlt if entry.needs_delta else None)
        return entry.build_tight(own) if form == "gaussian" else entry.build(own)
    config = entry.build(replace(inputs, delta=dlt if entry.needs_delta else None))
    if neighbour is not None and neighbour != config.neighbour:
        config = replace(config, neighbour=neighbour)
    if form in ("pure", "basic"):
        return config
    if not isinstance(config, DPLloydConfig):  # pragma: no cover - registry invariant
        raise ValueError(f"{entry.name!r} is not a DP-Lloyd configuration")
    target = inputs.epsilon if epsilon is None else epsilon
    if entry.tight_native:  # built at (inputs.epsilon, delta) by its own tight analysis
        return config if (target == inputs.epsilon and not prefix) \
            else scale_to(config, target, dlt, prefix)
    if form == "laplace":
        return laplace_at(config, target, dlt, prefix)
    return gaussian_twin(config, target, dlt, prefix)
