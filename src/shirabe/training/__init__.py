"""Training the learned answer stage: its examples, drawn from SQuAD-format questions over an
index of their paragraphs through the stage's own features (:mod:`shirabe.training.lines`), its
short-answer spans (:mod:`shirabe.training.spans`), and its figures on examples it was not
trained on (:mod:`shirabe.training.figures`).

Training reads what the stage computes for each candidate, so it sits beside the faces rather
than behind the engine; the faces' own contract (they ask the engine) does not cover it. The
model files it writes are read, written and loaded by the answer stage's functions, given here.
"""

from shirabe.answering.learned import load_model, read_model, write_model

__all__ = ["load_model", "read_model", "write_model"]
