"""The embedded index's compact forms, computed by hand: int8 codes of vectors and the scan over
them, half-precision cached vectors and packed terms."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.stores.embedded.quantize import BLOCK, dequantize, quantize, rescored, scan
from shirabe.stores.embedded.rows import pack_terms, packed_columns, unpack_terms
from shirabe.stores.embedded.vectors import to_half

# a row, its scale (largest component / 127) and its codes (each component / scale, rounded)
QUANTIZED = [
    ([0.5, -0.2, 0.1], 0.5 / 127, [127, -51, 25]),  # -50.8 → -51, 25.4 → 25
    ([0.0, 0.0, 0.0], 0.0, [0, 0, 0]),  # nothing to scale
    ([-1.0, 0.3, 0.01], 1.0 / 127, [-127, 38, 1]),  # 38.1 → 38, 1.27 → 1
]


def test_a_vector_becomes_int8_codes_and_a_scale_of_its_own() -> None:
    codes, scales = quantize(np.asarray([row for row, _, _ in QUANTIZED], dtype=np.float32))
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    assert codes.tolist() == [want for _, _, want in QUANTIZED]
    assert scales.tolist() == pytest.approx([scale for _, scale, _ in QUANTIZED], rel=1e-6)
    back = dequantize(codes, scales)
    assert back[0].tolist() == pytest.approx([0.5, -51 * 0.5 / 127, 25 * 0.5 / 127], rel=1e-6)
    assert back[1].tolist() == [0.0, 0.0, 0.0]


def test_the_scan_is_the_dot_product_of_what_the_codes_stand_for() -> None:
    codes, scales = quantize(np.asarray([row for row, _, _ in QUANTIZED], dtype=np.float32))
    query = np.asarray([1.0, 1.0, 0.0], dtype=np.float32)
    # (127 − 51) · 0.5/127, 0, (−127 + 38) · 1/127
    assert scan(codes, scales, query).tolist() == pytest.approx(
        [76 * 0.5 / 127, 0.0, -89 / 127], rel=1e-6
    )


def test_the_scan_reads_rows_block_by_block() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((2 * BLOCK + 5, 16)).astype(np.float32)
    codes, scales = quantize(vectors)
    query = rng.standard_normal(16).astype(np.float32)
    np.testing.assert_allclose(
        scan(codes, scales, query), dequantize(codes, scales) @ query, rtol=1e-5, atol=1e-5
    )
    assert scan(codes[:0], scales[:0], query).tolist() == []


def test_four_candidates_are_rescored_for_each_result() -> None:
    assert [rescored(k) for k in (1, 10, 100)] == [4, 40, 400]


# a value and the value half precision keeps of it
HALVES = [(0.1, 0.0999755859375), (1 / 3, 0.333251953125), (-2.0, -2.0), (65504.0, 65504.0)]


@pytest.mark.parametrize(("value", "kept"), HALVES)
def test_a_cached_vector_keeps_half_precision(value: float, kept: float) -> None:
    halves = to_half(np.asarray([[value, 0.5]], dtype=np.float32))
    assert halves.dtype == np.dtype("<f2") and halves.nbytes == 4
    assert halves.astype(np.float32).tolist() == [[kept, 0.5]]


@pytest.mark.parametrize("value", [70000.0, float("inf"), float("nan")])
def test_a_component_half_precision_cannot_hold_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match="65,504"):
        to_half(np.asarray([[0.5, value]], dtype=np.float32))


# a chunk's terms and its sentences' terms, and what the packed column gives back
TERMS = [
    (["賞与", "6月"], [], (["賞与", "6月"], [])),
    (["規程"], [["規程"], []], (["規程"], [["規程"], []])),  # an empty sentence stays one
    ([], [], ([], [])),
    (["x\ny", "z"], [["w"]], (["x", "y", "z"], [["w"]])),  # whitespace splits, as before
]


@pytest.mark.parametrize(("tokens", "sentences", "back"), TERMS)
def test_terms_are_packed_and_unpacked(
    tokens: list[str], sentences: list[list[str]], back: tuple[list[str], list[list[str]]]
) -> None:
    assert unpack_terms(pack_terms(tokens, sentences)) == back


def test_the_columns_of_an_earlier_schema_pack_to_the_same_terms() -> None:
    packed = packed_columns("資料 1 2", '["資料 1", "資料 2"]')
    assert unpack_terms(packed) == (["資料", "1", "2"], [["資料", "1"], ["資料", "2"]])
    assert packed == pack_terms(["資料", "1", "2"], [["資料", "1"], ["資料", "2"]])
