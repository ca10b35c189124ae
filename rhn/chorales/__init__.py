r"""Bach chorales as binary piano rolls, for next-step prediction of real music.

The subpackage has three parts, all importable from here:

- :mod:`rhn.chorales.data`: building the piano rolls from music21, the
  shipped file, loading and padding (:func:`load`, :func:`pad`, :func:`build`);
- :mod:`rhn.chorales.task`: next-step prediction as a task of :mod:`rhn.tasks`,
  its loss and its memoryless baseline (:func:`frame_nll`, :func:`generate`);
- :mod:`rhn.chorales.music`: sampling continuations from a model and
  synthesising audio (:func:`sample_continuation`, :func:`synthesize`).

The data are the four-part chorale harmonisations of J. S. Bach bundled with
music21 (Cuthbert and Ariza, 2010), as listed by
``music21.corpus.chorales.Iterator()`` (Riemenschneider numbers 1-371). They
are shipped inside the package as a small compressed file,
``rhn/_data/chorales.npz``, so that loading them needs neither music21 nor a
network; ``python -m rhn data chorales`` (:func:`build`, :func:`save`)
regenerates the file from music21's corpus.

How a score becomes a piano roll (:func:`score_to_roll`):

- **Time step: one quarter note.** The roll samples the score on the beat:
  frame ``t`` holds the pitches that sound at offset ``phase + t`` quarter
  notes, where ``phase`` aligns the grid with the bar lines (0 for all but one
  chorale, which starts with an eighth-note pickup). Notes that begin and end
  between beats (eighth-note passing tones) are therefore dropped. The JSB
  chorales benchmark (Boulanger-Lewandowski et al., 2012) is also sampled at
  the quarter note.
- **Voices:** the vocal parts (names containing soprano, alto, tenor or bass;
  every part of the three scores whose parts have no names). Instrumental
  descants (horns, trumpets, violins, timpani) of the cantata settings are left
  out.
- **Ties, repeated notes:** a binary roll has no onsets, so a note held (or
  tied) across beats and a note struck again look the same.
- **Rests** are silent frames for that voice; **fermatas** are ignored (the
  notated duration is kept); **pickup bars** are kept: the roll starts at the
  first beat of the score.
- **Pitches:** MIDI numbers from :data:`~rhn.chorales.data.LOWEST` (36, C2) to
  81 (A5), the range that occurs, so ``P = 46`` columns. No transposition.
- **Duplicates:** Riemenschneider's collection lists some chorales twice: 21
  of its 371 numbers point at a score already listed, and 2 more at a second
  file with the same music. A chorale whose file or roll equals an earlier one
  is dropped and its number kept with the first, which leaves 348 chorales.

The split is by chorale and fixed: in the order of the (first) Riemenschneider
number, chorale ``i`` (counting from 0) is in ``test`` if ``i % 5 == 4``, in
``valid`` if ``i % 5 == 3`` and in ``train`` otherwise: 210, 69 and 69
chorales of 11659, 3673 and 3579 frames (60/20/20 like the JSB split, but not
the same chorales nor the same pitch range).

Licence: music21 is BSD-licensed; its corpus is distributed with the
encoders' permission (``music21/corpus/license.txt``), and the chorales
themselves, composed before 1750, are in the public domain.

Shapes: a chorale is a ``(T, P)`` 0/1 tensor; :func:`pad` stacks several into
``(T_max, B, P)`` with a ``(T_max, B)`` boolean mask, time-first like the
models of :mod:`rhn`. :func:`next_step` turns that into inputs and targets,
:func:`frame_nll` is the loss and :func:`baseline_nll` the memoryless baseline.

Example::

    >>> train = load("train")
    >>> len(train), train.num_pitches
    (210, 46)
    >>> roll, mask = pad(train.rolls[:3])
    >>> roll.shape[1:], mask.shape == roll.shape[:2]
    (torch.Size([3, 46]), True)
"""

from .data import (
    DATA_FILE,
    HIGHEST,
    LOWEST,
    SPLITS,
    Chorales,
    _data_path,  # noqa: F401  (the tests read the shipped file's path)
    _read,  # noqa: F401  (and its arrays)
    build,
    data_main,
    load,
    pad,
    save,
    score_to_roll,
)
from .music import sample_continuation, synthesize
from .task import (
    baseline_nll,
    batches,
    frame_nll,
    generate,
    init_head,
    next_step,
    pitch_frequencies,
    task_loss,
)

__all__ = [
    "LOWEST",
    "HIGHEST",
    "SPLITS",
    "Chorales",
    "load",
    "pad",
    "next_step",
    "frame_nll",
    "pitch_frequencies",
    "baseline_nll",
    "batches",
    "generate",
    "task_loss",
    "init_head",
    "sample_continuation",
    "synthesize",
    "score_to_roll",
    "build",
    "save",
    "DATA_FILE",
    "data_main",
]
