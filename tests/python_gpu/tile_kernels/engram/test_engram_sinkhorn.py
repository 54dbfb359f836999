"""tilejit.tile_kernels.engram's Sinkhorn building blocks on the GPU
(TileKernels 2.1): the momentum update bit for bit against torch's FMAs,
a step, its fixed-order reduction (bit for bit) and the finalized matrix
against float64 torch, and the driver loop they make."""
import pytest
import torch

from tilejit import tile_kernels as tk
from tk_testing import assert_equal

E = tk.engram


@pytest.mark.parametrize("gdt", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("mdt", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("nesterov", [True, False])
def test_momentum_update(gdt, mdt, nesterov):
    # Seeded, so that a run repeats: float64's a * b + c rounded twice (to
    # float64, then float32) can differ from one FMA rounding at a float32
    # midpoint (about one element in 2^29), a fault of this reference.
    gen = torch.Generator(device="cuda").manual_seed(5)
    g = torch.randn(512, 768, device="cuda", generator=gen).to(gdt)
    m = torch.randn(512, 768, device="cuda", generator=gen).to(mdt)
    beta = 0.9
    c0 = torch.tensor(beta, dtype=torch.float32)
    c1 = torch.tensor(1 - beta, dtype=torch.float64).float()
    gf, mf = g.float().cpu(), m.float().cpu()
    # fma(m, c0, c1 * g): the product c1 * g rounded, then one rounding.
    m32 = (mf.double() * c0.double() + (c1 * gf).double()).float()
    want = ((gf.double() * c1.double() + (c0 * m32).double()).float()
            if nesterov else m32)
    buffer = m.clone()
    out = E.engram_sinkhorn_momentum_update(g, buffer, beta, nesterov)
    assert_equal(out.cpu(), want)
    assert_equal(buffer.cpu(), m32.to(mdt))


def test_step_reduce_finalize():
    r, dh = 4096, 2560
    matrix = torch.randn(r, dh, device="cuda")
    rs = torch.rand(r, device="cuda") + 0.5
    cs = torch.rand(dh, device="cuda") + 0.5
    eps = 1e-8
    x = (rs.double().unsqueeze(1) * matrix.double()) * cs.double()
    norm = x.norm(dim=1)
    rs0 = rs.clone()
    row_norm, partial = E.engram_sinkhorn_step(matrix, rs, cs, eps)
    assert partial.shape == (3 * tk.config.get_num_sms(), dh)
    torch.testing.assert_close(row_norm.double(), norm, rtol=1e-5, atol=0)
    torch.testing.assert_close(rs.double(), rs0.double() / (norm + eps),
                               rtol=1e-5, atol=0)
    col = torch.empty(dh, device="cuda")
    assert E.engram_sinkhorn_step_reduce(partial, col) is None
    want = torch.zeros(dh, device="cuda")
    for p in range(partial.shape[0]):  # in order, in f32
        want = want + partial[p]
    assert_equal(col, want)
    y = x / (norm + eps).unsqueeze(1)
    torch.testing.assert_close(col.double(), y.square().sum(0), rtol=1e-4,
                               atol=0)
    out = E.engram_sinkhorn_finalize(matrix, rs, cs, eps, 0.5)
    x2 = (rs.double().unsqueeze(1) * matrix.double()) * cs.double()
    want = x2 * (0.5 / (x2.norm(dim=1) + eps)).unsqueeze(1)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-7)
