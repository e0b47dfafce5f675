"""tilec: a small ctypes binding of libtilert (include/tile/runtime.h).

    import tilec, torch
    dev = tilec.Device("cuda")                     # or "interp" (numpy arrays)
    mod = dev.load_source("examples/softmax.tile")  # or dev.load_bundle("k.tbundle")
    softmax = mod.kernel("softmax")
    softmax(out, x, rows, cols)                     # grid from the kernel's grid clause
    softmax(out, x, rows, cols, grid=(rows,), stream=torch.cuda.current_stream())

Arguments, one per runtime parameter in declaration order: PyTorch tensors (data_ptr,
numel * element_size), objects with __cuda_array_interface__, numpy arrays (the
interpreter device: host memory), ints, floats and bools.  `const` parameters are set
with Kernel.set_const.  Every failure raises tilec.Error with the runtime's message.

libtilert.so is found from $TILEC_RT_LIB, then next to a build of this repository
(build*/runtime), then an installed prefix (../../../lib from share/tilec/python), then the
system's library path.
"""
import ctypes
import ctypes.util
import glob
import os

__all__ = ["Device", "Module", "Kernel", "Error", "library"]

STATUS = ["OK", "ERR_NO_DRIVER", "ERR_CUDA", "ERR_BUNDLE", "ERR_COMPILE", "ERR_NOT_FOUND",
          "ERR_ARGS", "ERR_NO_VARIANT", "ERR_IO", "ERR_INVALID", "ERR_UNSUPPORTED", "ERR_RUN"]
_CUDA, _INTERP = 0, 1
_ARG_I64, _ARG_F64, _ARG_PTR = 0, 1, 2


class Error(RuntimeError):
    """A failed runtime call: .status is the tile_rt_status name ("ERR_ARGS", ...)."""

    def __init__(self, status, message):
        self.status = STATUS[status] if 0 <= status < len(STATUS) else str(status)
        super().__init__(f"{self.status}: {message}")


class _Buf(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("bytes", ctypes.c_size_t)]


class _Val(ctypes.Union):
    _fields_ = [("i64", ctypes.c_int64), ("f64", ctypes.c_double), ("buf", _Buf)]


class _Arg(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("kind", ctypes.c_int), ("u", _Val)]


class _Options(ctypes.Structure):
    _fields_ = [("device_ordinal", ctypes.c_int), ("cache_dir", ctypes.c_char_p),
                ("tune", ctypes.c_int), ("tune_log", ctypes.c_int),
                ("log", ctypes.c_void_p), ("log_ud", ctypes.c_void_p)]


def _find_library():
    env = os.environ.get("TILEC_RT_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    cands = sorted(glob.glob(os.path.join(repo, "build*", "runtime", "libtilert.so")),
                   key=os.path.getmtime, reverse=True)
    cands += [os.path.join(here, "..", "..", "..", "..", d, "libtilert.so") for d in ("lib", "lib64")]
    for c in cands:
        if os.path.exists(c):
            return c
    found = ctypes.util.find_library("tilert")
    if found:
        return found
    raise OSError("libtilert.so not found: set TILEC_RT_LIB to its path")


_lib = None


def library():
    """The loaded libtilert (ctypes.CDLL), with argument types declared."""
    global _lib
    if _lib is not None:
        return _lib
    L = ctypes.CDLL(_find_library())
    P, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    PP = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "tile_rt_status_string": (ctypes.c_char_p, [I]),
        "tile_rt_open": (I, [I, ctypes.POINTER(_Options), PP]),
        "tile_rt_open_error": (ctypes.c_char_p, []),
        "tile_rt_close": (None, [P]),
        "tile_rt_last_error": (ctypes.c_char_p, [P]),
        "tile_rt_device_name": (ctypes.c_char_p, [P]),
        "tile_rt_load_bundle_file": (I, [P, ctypes.c_char_p, PP]),
        "tile_rt_load_bundle": (I, [P, ctypes.c_char_p, S, PP]),
        "tile_rt_load_source_file": (I, [P, ctypes.c_char_p, PP]),
        "tile_rt_load_source": (I, [P, ctypes.c_char_p, ctypes.c_char_p, S, PP]),
        "tile_rt_module_free": (None, [P]),
        "tile_rt_get_kernel": (I, [P, ctypes.c_char_p, PP]),
        "tile_rt_kernel_param_count": (I, [P]),
        "tile_rt_kernel_param_name": (ctypes.c_char_p, [P, I]),
        "tile_rt_launch": (I, [P, ctypes.POINTER(_Arg), I, P, ctypes.POINTER(ctypes.c_int64)]),
        "tile_rt_set_const": (I, [P, ctypes.c_char_p, ctypes.c_int64, ctypes.c_double]),
        "tile_rt_last_variant": (ctypes.c_char_p, [P]),
        "tile_rt_alloc": (I, [P, S, PP]),
        "tile_rt_free": (I, [P, P]),
        "tile_rt_copy_to_device": (I, [P, P, P, S]),
        "tile_rt_copy_to_host": (I, [P, P, P, S]),
        "tile_rt_synchronize": (I, [P]),
        "tile_rt_bench": (I, [P, ctypes.POINTER(_Arg), I, ctypes.POINTER(ctypes.c_int64), I, I,
                              ctypes.POINTER(ctypes.c_double)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    _lib = L
    return L


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def _stream_handle(stream):
    """A CUstream from None, an int, a torch.cuda.Stream or anything with .cuda_stream."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    h = getattr(stream, "cuda_stream", None)
    if h is None:
        raise TypeError(f"not a stream: {stream!r}")
    return h or None


class Device:
    """An open device: "cuda" (GPU `ordinal`) or "interp" (the CPU interpreter)."""

    def __init__(self, kind="cuda", ordinal=0, cache_dir=None, tune=None):
        if kind not in ("cuda", "interp"):
            raise ValueError("kind must be 'cuda' or 'interp'")
        L = library()
        self.kind = kind
        opt = _Options(ordinal, cache_dir.encode() if cache_dir else None,
                       -1 if tune is None else int(bool(tune)), -1, None, None)
        h = ctypes.c_void_p()
        s = L.tile_rt_open(_CUDA if kind == "cuda" else _INTERP, ctypes.byref(opt), ctypes.byref(h))
        if s:
            raise Error(s, _text(L.tile_rt_open_error()))
        self._h = h
        self._modules = []

    @property
    def name(self):
        return _text(library().tile_rt_device_name(self._h))

    def _check(self, s):
        if s:
            raise Error(s, _text(library().tile_rt_last_error(self._h)))

    def load_source(self, path_or_text, name=None):
        """A .tile file by path, or source text (then `name` names it in messages)."""
        L, m = library(), ctypes.c_void_p()
        if name is None and os.path.exists(path_or_text):
            self._check(L.tile_rt_load_source_file(self._h, os.fsencode(path_or_text), ctypes.byref(m)))
        else:
            src = path_or_text.encode()
            self._check(L.tile_rt_load_source(self._h, (name or "<source>").encode(), src, len(src),
                                              ctypes.byref(m)))
        return Module(self, m)

    def load_bundle(self, path_or_bytes):
        L, m = library(), ctypes.c_void_p()
        if isinstance(path_or_bytes, (bytes, bytearray)):
            data = bytes(path_or_bytes)
            self._check(L.tile_rt_load_bundle(self._h, data, len(data), ctypes.byref(m)))
        else:
            self._check(L.tile_rt_load_bundle_file(self._h, os.fsencode(path_or_bytes), ctypes.byref(m)))
        return Module(self, m)

    def synchronize(self):
        self._check(library().tile_rt_synchronize(self._h))

    def close(self):
        if getattr(self, "_h", None):
            for m in self._modules:
                m._free()
            library().tile_rt_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Module:
    def __init__(self, dev, handle):
        self.device, self._h = dev, handle
        dev._modules.append(self)

    def kernel(self, name):
        k = ctypes.c_void_p()
        self.device._check(library().tile_rt_get_kernel(self._h, name.encode(), ctypes.byref(k)))
        return Kernel(self, name, k)

    def _free(self):
        if self._h:
            library().tile_rt_module_free(self._h)
            self._h = None


def _buffer(a, interp):
    """(address, bytes) of an array-like argument, or None when `a` is not one."""
    if hasattr(a, "data_ptr") and hasattr(a, "element_size"):        # torch.Tensor
        if interp and getattr(a, "is_cuda", False):
            raise TypeError("a CUDA tensor cannot go to the interpreter device")
        if not interp and not getattr(a, "is_cuda", False):
            raise TypeError("a CPU tensor cannot go to the cuda device")
        return a.data_ptr(), a.numel() * a.element_size()
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        if interp:
            raise TypeError("device memory (__cuda_array_interface__) cannot go to the interpreter")
        n = 1
        for d in cai["shape"]:
            n *= d
        return cai["data"][0], n * int(cai["typestr"][2:])
    ai = getattr(a, "__array_interface__", None)                      # numpy
    if ai is not None:
        if not interp:
            raise TypeError("host memory (numpy) cannot go to the cuda device: use the interp "
                            "device or a torch CUDA tensor")
        return ai["data"][0], a.nbytes
    return None


class Kernel:
    """A kernel of a module; call it to launch (asynchronously on a GPU)."""

    def __init__(self, module, name, handle):
        self.module, self.name, self._h = module, name, handle
        L = library()
        self.params = [_text(L.tile_rt_kernel_param_name(handle, i))
                       for i in range(L.tile_rt_kernel_param_count(handle))]

    def _args(self, args):
        interp = self.module.device.kind == "interp"
        arr = (_Arg * max(1, len(args)))()
        for i, a in enumerate(args):
            buf = _buffer(a, interp)
            if buf is not None:
                arr[i].kind, arr[i].buf.ptr, arr[i].buf.bytes = _ARG_PTR, buf[0], buf[1]
            elif isinstance(a, (bool, int)):
                arr[i].kind, arr[i].i64 = _ARG_I64, int(a)
            elif isinstance(a, float):
                arr[i].kind, arr[i].f64 = _ARG_F64, a
            else:
                raise TypeError(f"{self.name}: argument {i + 1} ({type(a).__name__}) is not a "
                                "tensor, array, int or float")
        return arr

    @staticmethod
    def _grid(grid):
        if grid is None:
            return None
        g = list(grid) + [1] * (3 - len(grid))
        return (ctypes.c_int64 * 3)(*g)

    def __call__(self, *args, grid=None, stream=None):
        arr = self._args(args)
        self.module.device._check(library().tile_rt_launch(
            self._h, arr, len(args), _stream_handle(stream), self._grid(grid)))

    def bind(self, *args, grid=None, stream=None):
        """A launcher with the arguments converted once: calling it launches again (for
        timing loops, where converting arguments per launch would cost host time)."""
        arr, g, st = self._args(args), self._grid(grid), _stream_handle(stream)
        L, h, n, check = library(), self._h, len(args), self.module.device._check

        def launch():
            check(L.tile_rt_launch(h, arr, n, st, g))
        launch.args = args          # keeps the tensors alive as long as the launcher
        return launch

    def set_const(self, name, value):
        self.module.device._check(library().tile_rt_set_const(
            self._h, name.encode(), int(value), float(value)))

    @property
    def last_variant(self):
        return _text(library().tile_rt_last_variant(self._h))

    def bench(self, *args, grid=None, warmup=10, reps=100):
        """Median milliseconds of `reps` launches timed with device events."""
        arr, ms = self._args(args), ctypes.c_double()
        self.module.device._check(library().tile_rt_bench(
            self._h, arr, len(args), self._grid(grid), warmup, reps, ctypes.byref(ms)))
        return ms.value
