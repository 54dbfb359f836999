# expf_survey.py - How often CUDA's expf (torch.exp on f32, CUDA's accurate
# expf) differs from the correctly rounded e^x (f64 exp rounded to f32), and
# from glibc's expf: over every bf16 value, and over every f32.
import ctypes, torch, numpy as np
libm = ctypes.CDLL("libm.so.6"); libm.expf.restype = ctypes.c_float; libm.expf.argtypes = [ctypes.c_float]
codes = torch.arange(65536, dtype=torch.int32)
bits = ((codes << 16)).view(torch.float32)          # every bf16 as f32
x = bits.cuda()
cuda = torch.exp(x).cpu().view(torch.int32)
cr = torch.exp(x.double()).float().cpu().view(torch.int32)
xs = bits.numpy()
glibc = np.array([libm.expf(float(v)) for v in xs], dtype=np.float32).view(np.int32)
fin = torch.isfinite(bits) & torch.isfinite(cuda.view(torch.float32))
def diff(a, b):
    d = (a.long() - b.long()).abs()
    return int(((a != b) & fin).sum()), int(d[fin].max())
print("bf16 inputs: finite", int(fin.sum()))
print("  cuda != correctly rounded: %d (max ulp %d)" % diff(cuda, cr))
print("  cuda != glibc expf      : %d (max ulp %d)" % diff(cuda, torch.from_numpy(glibc)))
print("  glibc != correctly rounded: %d" % diff(torch.from_numpy(glibc), cr)[0])
# swiglu's exp argument is -g: same set (bf16 symmetric). Every f32:
tot = 0; mis = 0; mx = 0
for c in range(256):
    i = torch.arange(c << 24, (c + 1) << 24, dtype=torch.int64, device="cuda").to(torch.int32)
    f = i.view(torch.float32)
    a = torch.exp(f).view(torch.int32); b = torch.exp(f.double()).float().view(torch.int32)
    ok = torch.isfinite(f) & torch.isfinite(a.view(torch.float32)) & (a.view(torch.float32) != 0)
    ne = (a != b) & ok
    tot += int(ok.sum()); mis += int(ne.sum())
    if ne.any(): mx = max(mx, int((a.long() - b.long()).abs()[ne].max()))
print("f32 inputs (finite, nonzero result): %d; cuda != correctly rounded: %d (%.4f%%), max ulp %d" % (tot, mis, 100.0 * mis / tot, mx))
