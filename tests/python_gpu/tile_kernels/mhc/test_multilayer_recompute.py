"""tilejit.tile_kernels.mhc.mhc_multilayer_recompute on the GPU: the spec's
contract (moe_engram_mhc.md §3.9), torch.equal against chaining the
package's own mhc_pre_apply_mix_fwd and mhc_post_fwd, on TileKernels' (L,
P, H) at 8192 tokens of 4 streams, and on a stack longer than one launch
takes (13 layers: two groups)."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

m = tk.mhc
CASES = [(1, 1, 2560), (3, 2, 2560), (3, 3, 2560), (10, 9, 2560),
         (10, 10, 2560), (10, 9, 4096), (10, 10, 4096), (10, 9, 7168),
         (10, 10, 7168), (10, 9, 8192), (10, 10, 8192), (13, 12, 1024),
         (13, 13, 1024)]


@pytest.mark.parametrize("layers,posts,h", CASES)
def test_recompute_equals_the_chain(layers, posts, h):
    n, mhc = 8192, 4
    g = torch.Generator(device="cuda").manual_seed(layers * 100 + posts + h)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, device="cuda", generator=g).to(dtype)

    initial = randn(1, n, mhc, h, dtype=torch.bfloat16)
    pre = [randn(1, n, mhc, 1) for _ in range(layers)]
    out = [randn(1, n, h, dtype=torch.bfloat16) for _ in range(posts)]
    post = [randn(1, n, mhc, 1) for _ in range(posts)]
    comb = [randn(1, n, mhc, mhc) for _ in range(posts)]
    inputs = [torch.empty(1, n, h, device="cuda", dtype=torch.bfloat16)
              for _ in range(layers)]
    residuals = [torch.empty(1, n, mhc, h, device="cuda",
                             dtype=torch.bfloat16) for _ in range(posts)]
    assert m.mhc_multilayer_recompute(initial, pre, out, post, comb, inputs,
                                      residuals) is None
    r = initial
    for i in range(layers):
        want_input = torch.empty(1, n, h, device="cuda", dtype=torch.bfloat16)
        m.mhc_pre_apply_mix_fwd(r, pre[i], want_input)
        assert_equal(inputs[i], want_input)
        if i < posts:
            r = m.mhc_post_fwd(out[i], r, post[i], comb[i])
            assert_equal(residuals[i], r)


def test_recompute_refuses_lists_that_disagree():
    x = torch.randn(1, 8, 4, 64, device="cuda").bfloat16()
    with pytest.raises(ValueError, match="'layer_output_list' has 1 tensors"):
        m.mhc_multilayer_recompute(x, [None] * 3, [None], [None], [None],
                                   [None] * 3, [None])
