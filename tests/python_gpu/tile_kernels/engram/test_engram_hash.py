"""tilejit.tile_kernels.engram.engram_hash on the GPU against a torch
int64 reference (TileKernels' engram_hash_ref: the running xor of ids *
multipliers, floor-mod each table's size, plus its offset), bitwise;
TileKernels' shapes and ranges, wrapping products, 2.1's image tokens."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal


def make_offsets(vocab_sizes):
    flat = vocab_sizes.flatten(1)
    return (torch.cumsum(flat, 1) - flat).int()


def reference(ids, multipliers, vocab_sizes, offsets, mask=None):
    L, n1, M = vocab_sizes.shape
    x = ids.long()
    outs = []
    for layer in range(L):
        h = x[:, 0] * multipliers[layer, 0]
        cols = []
        for i in range(1, n1 + 1):
            h = torch.bitwise_xor(h, x[:, i] * multipliers[layer, i])
            for j in range(M):
                size = vocab_sizes[layer, i - 1, j].long()
                cols.append(torch.remainder(h, size))
        outs.append(torch.stack(cols, 1) + offsets[layer].long())
    out = torch.stack(outs).int()
    if mask is not None:
        out = out.masked_fill(mask.view(1, -1, 1), -1)
    return out


@pytest.mark.parametrize("tokens", [4001, 8001])
def test_engram_hash(tokens):
    g = torch.Generator(device="cuda").manual_seed(tokens)
    ids = torch.randint(0, 100000, (tokens, 3), device="cuda", generator=g,
                        dtype=torch.int32)
    mult = torch.randint(0, 100000, (2, 3), device="cuda", generator=g)
    vocab = torch.randint(100000, 1000000, (2, 2, 8), device="cuda",
                          generator=g, dtype=torch.int32)
    offsets = make_offsets(vocab)
    assert_equal(tk.engram.engram_hash(ids, mult, vocab, offsets),
                 reference(ids, mult, vocab, offsets))


def test_engram_hash_wraps_and_masks_image_tokens():
    g = torch.Generator(device="cuda").manual_seed(7)
    ids = torch.randint(-2**31, 2**31 - 1, (1000, 4), device="cuda",
                        generator=g, dtype=torch.int32)
    mult = torch.randint(-2**62, 2**62, (3, 4), device="cuda", generator=g)
    vocab = torch.randint(1, 40, (3, 3, 5), device="cuda", generator=g,
                          dtype=torch.int32)
    offsets = make_offsets(vocab)
    mask = torch.rand(1000, device="cuda", generator=g) < 0.3
    assert_equal(tk.engram.engram_hash(ids, mult, vocab, offsets, mask),
                 reference(ids, mult, vocab, offsets, mask))
