"""Writing answers from hits."""

from shirabe.generators.factory import make_generator
from shirabe.generators.protocol import (
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    GenerationEvent,
    Generator,
    GeneratorError,
    HitsEvent,
    StreamingGenerator,
    TokenEvent,
)

__all__ = [
    "CitationsEvent",
    "DoneEvent",
    "ErrorEvent",
    "GenerationEvent",
    "Generator",
    "GeneratorError",
    "HitsEvent",
    "StreamingGenerator",
    "TokenEvent",
    "make_generator",
]
