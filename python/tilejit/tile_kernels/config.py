"""tile_kernels.config on tilejit: the device's SM count and shared memory
(torch's device properties), the SM count kernels may use, and 2.1's token
alignment of the psum row layout."""
import functools

from ._binding import torch

_num_sms = 0


@functools.lru_cache(maxsize=None)
def get_device_num_sms():
    t = torch()
    return t.cuda.get_device_properties(
        t.cuda.current_device()).multi_processor_count


def set_num_sms(num_sms):
    """The SM count kernels may use (0 < num_sms <= the device's). tilejit's
    kernels size their grids from the shapes; this is kept for
    TileKernels' callers and read back by get_num_sms."""
    global _num_sms
    if not 0 < num_sms <= get_device_num_sms():
        raise ValueError(f"argument 'num_sms' is {num_sms}; requires 0 < "
                         f"num_sms <= {get_device_num_sms()}")
    _num_sms = num_sms


def get_num_sms():
    return _num_sms or get_device_num_sms()


@functools.lru_cache(maxsize=None)
def get_max_smem_per_sm():
    t = torch()
    return t.cuda.get_device_properties(
        t.cuda.current_device()).shared_memory_per_multiprocessor


_token_alignment = 128


def set_token_alignment(token_alignment):
    """Where each expert's rows start in TileKernels 2.1's psum row layout
    (a power of two; the SwiGLU ops read it)."""
    global _token_alignment
    if token_alignment < 1 or token_alignment & (token_alignment - 1):
        raise ValueError(f"argument 'token_alignment' is {token_alignment}; "
                         "requires a power of two")
    _token_alignment = token_alignment


def get_token_alignment():
    return _token_alignment


def reset_runtime_config():
    """The SM count and token alignment back to their defaults."""
    global _num_sms, _token_alignment
    _num_sms = 0
    _token_alignment = 128
