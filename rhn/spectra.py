r"""Geršgorin discs and spectra of (batches of) square matrices.

The matrix tools of :mod:`rhn.analysis`, which documents them and exports
them under its own name (``rhn.analysis.gershgorin_discs``, ...): the discs
that bound the eigenvalues of a temporal Jacobian, whether points lie in
them, the eigenvalues themselves, the spectral radius and the largest
singular value. They know nothing about recurrent cells: any square real or
complex matrix ``(n, n)``, or a batch ``(..., n, n)``, will do.
"""

from __future__ import annotations

import torch

from . import _checks

__all__ = [
    "gershgorin_discs",
    "in_discs",
    "eigenvalues",
    "spectral_radius",
    "max_singular_value",
]


def _square(name: str, J: object) -> torch.Tensor:
    """Check that ``J`` is a (batch of) square real or complex matrices."""
    if not isinstance(J, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(J).__name__}")
    if not (J.is_floating_point() or J.is_complex()):
        raise TypeError(
            f"{name} must be a floating-point or complex tensor, got dtype "
            f"{J.dtype}; convert it with {name}.double()"
        )
    if J.dim() < 2 or J.shape[-1] != J.shape[-2] or J.shape[-1] == 0:
        raise ValueError(
            f"{name} must be a square matrix (n, n) or a batch (..., n, n) with "
            f"n >= 1, got shape {_checks.shape_str(J.shape)}"
        )
    # before any decomposition: LAPACK on NaN or inf can crash the interpreter
    return _checks.finite_tensor(name, J)


def gershgorin_discs(
    J: torch.Tensor, *, columns: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Centres and radii of the Geršgorin discs of a square matrix.

    Geršgorin's circle theorem: every eigenvalue :math:`\lambda` of
    :math:`J \in \mathbb{C}^{n \times n}` lies in at least one of the *row
    discs*

    .. math::
        D_i = \Bigl\{ z \in \mathbb{C} : |z - J_{ii}| \le
              \sum_{j \ne i} |J_{ij}| \Bigr\}, \qquad i = 1, \dots, n .

    Because :math:`J^\top` has the same eigenvalues, the *column discs* (the
    row discs of :math:`J^\top`, radii :math:`\sum_{j \ne i} |J_{ji}|`) bound
    the same spectrum; the paper, which writes :math:`A = J^\top`, draws
    those. Both unions contain every eigenvalue, and so does their
    intersection.

    Args:
        J: a square matrix ``(n, n)`` or a batch ``(..., n, n)``, real or
            complex.
        columns: if ``True``, return the column discs instead of the row discs
            (default ``False``).

    Returns:
        ``(centres, radii)``, each ``(n,)`` (or ``(..., n)``): the diagonal
        :math:`J_{ii}` (same dtype as ``J``) and the real, non-negative radii.
    """
    J = _square("J", J)
    if columns:
        J = J.transpose(-1, -2)
    centres = torch.diagonal(J, dim1=-2, dim2=-1)
    off = J.abs()
    # zero the diagonal rather than subtract |J_ii|: exact, no cancellation
    off = off.masked_fill(torch.eye(J.shape[-1], dtype=torch.bool, device=J.device), 0)
    return centres, off.sum(dim=-1)


def in_discs(
    points: torch.Tensor,
    centres: torch.Tensor,
    radii: torch.Tensor,
    *,
    tol: float = 1e-9,
) -> torch.Tensor:
    r"""Which points lie in the union of the discs :math:`|z - c_i| \le r_i`.

    Args:
        points: complex or real points, ``(m,)`` or ``(..., m)``.
        centres, radii: the discs, ``(n,)`` or ``(..., n)`` with the same
            leading dimensions as ``points``.
        tol: slack added to every radius (default ``1e-9``), for rounding in
            the eigenvalue solver; scaled by ``1 + max |c_i| + r_i``.

    Returns:
        A boolean tensor of the shape of ``points``.
    """
    tol = _checks.real("tol", tol)
    for name, value in (("points", points), ("centres", centres), ("radii", radii)):
        if not isinstance(value, torch.Tensor) or value.dim() == 0:
            raise TypeError(f"{name} must be a tensor of shape (..., n), got {value!r}")
    if centres.shape != radii.shape or centres.shape[:-1] != points.shape[:-1]:
        raise ValueError(
            "centres and radii must have the same shape (..., n), with the leading "
            "dimensions of points (..., m); got points "
            f"{_checks.shape_str(points.shape)}, centres "
            f"{_checks.shape_str(centres.shape)}, radii "
            f"{_checks.shape_str(radii.shape)}"
        )
    dist = (points.unsqueeze(-1) - centres.unsqueeze(-2)).abs()  # (..., m, n)
    scale = 1.0 + centres.abs().amax(-1, keepdim=True) + radii.amax(-1, keepdim=True)
    slack = tol * scale.unsqueeze(-1)
    return (dist <= radii.unsqueeze(-2) + slack).any(dim=-1)


def eigenvalues(J: torch.Tensor) -> torch.Tensor:
    """The (complex) eigenvalues of ``J``, ``(n, n) -> (n,)`` or batched.

    ``torch.linalg.eigvals``; their order is not meaningful.
    """
    return torch.linalg.eigvals(_square("J", J))


def spectral_radius(J: torch.Tensor) -> torch.Tensor:
    r"""The spectral radius :math:`\rho(J) = \max_i |\lambda_i|`, ``(n, n) -> ()``.

    It governs powers of one fixed matrix: :math:`\lVert J^n \rVert^{1/n}
    \to \rho(J)`, so :math:`J^n` grows when :math:`\rho(J) > 1` and shrinks
    when :math:`\rho(J) < 1`, in the long run. It bounds neither one step
    (a non-normal :math:`J` with :math:`\rho(J) < 1` can stretch a vector for
    many steps) nor a product of different Jacobians; norms do
    (:func:`max_singular_value`, and the reach of the Geršgorin discs,
    :math:`\lVert J \rVert_\infty`).
    """
    return eigenvalues(J).abs().amax(dim=-1)


def max_singular_value(J: torch.Tensor) -> torch.Tensor:
    r"""The largest singular value, the spectral norm :math:`\lVert J \rVert_2`.

    It bounds how much one step can stretch a vector (and a gradient):
    :math:`\lVert J u \rVert_2 \le \lVert J \rVert_2 \lVert u \rVert_2`, and
    :math:`\rho(J) \le \lVert J \rVert_2`. ``(n, n) -> ()`` or batched.
    """
    return torch.linalg.svdvals(_square("J", J))[..., 0]
