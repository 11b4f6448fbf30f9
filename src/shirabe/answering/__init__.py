"""Writing answers from hits: quoted sentences, or a chat model gated by the same refusal
test; generators are found through the ``shirabe.generators`` entry points."""
