"""tilec: run tile kernels from Python, the way Triton kernels are run.

    import tilec, torch
    k = tilec.load("examples/softmax.tile").softmax
    k[(rows,)](out, x, rows, cols)              # grid given, like Triton's kernel[grid](...)
    k(out, x, rows, cols)                       # grid from the kernel's grid clause
    k[(rows,)](out, x, rows=rows, cols=cols, BLOCK=1024)   # keywords; a tuned constant pinned
    k[lambda META: (tilec.cdiv(rows, META["ROWS"]),)](...)  # META: the variant's constants
    for v in k.variants(): k[grid](..., **v)    # every variant, one by one (tests)
    ms = tilec.do_bench(lambda: k(out, x, rows, cols))

Arguments, one per runtime parameter, positional or by name: torch tensors, numpy arrays,
objects with __cuda_array_interface__ or __array_interface__, ints, floats and bools.  The
element type of an array must be the parameter's pointee (bf16 through torch.bfloat16 or
ml_dtypes.bfloat16), and an array must be contiguous: wrap a strided view in
tilec.strided(a) to pass the address of its first element as Triton does (the kernel then
indexes with the strides you pass it).  `const` parameters, tuned constants, `warps` and
`stages` are keywords; each call says all of them that it fixes (nothing is remembered from
one call to the next).

Where a launch runs: on the GPU when its arrays are device memory (CUDA tensors,
__cuda_array_interface__), on the CPU interpreter when they are host memory (numpy, CPU
tensors).  A launch with torch CUDA tensors goes on torch's current stream unless
stream= says otherwise.  Every failure of the runtime raises tilec.Error; wrong arguments
raise TypeError or ValueError naming the parameter.

libtilert.so is found from $TILEC_RT_LIB, then $TILEC_PREFIX (an install prefix or a build
directory), then a build of the repository this file lies in (build*/runtime), then next
to a `tilec` program on $PATH (its ../lib, or a build directory's runtime/), then a build
directory under the current directory (build*/runtime), then the system's library path.
"""
import ctypes
import ctypes.util
import difflib
import glob
import os
import shutil
import sys
import time

__all__ = ["load", "Device", "Module", "Kernel", "Error", "strided", "do_bench", "device",
           "cuda_available", "to_device", "DeviceArray", "library", "cdiv", "next_power_of_2",
           "WARPS", "__version__"]
__version__ = "0.1.0"

STATUS = ["OK", "ERR_NO_DRIVER", "ERR_CUDA", "ERR_BUNDLE", "ERR_COMPILE", "ERR_NOT_FOUND",
          "ERR_ARGS", "ERR_NO_VARIANT", "ERR_IO", "ERR_INVALID", "ERR_UNSUPPORTED", "ERR_RUN"]
_CUDA, _INTERP = 0, 1
_ARG_I64, _ARG_F64, _ARG_PTR = 0, 1, 2
# tile_scalar (include/tile/tile.h) in its order, and each one's size in bytes
SCALARS = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
           "f64", "f8e4m3", "f8e5m2"]
_SIZE = {"bool": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4,
         "u64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "f8e4m3": 1, "f8e5m2": 1}
# array-interface type strings (kind letter + size) to tile scalars
_TYPESTR = {"b1": "bool", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64", "u1": "u8",
            "u2": "u16", "u4": "u32", "u8": "u64", "f2": "f16", "f4": "f32", "f8": "f64"}
# dtype names (torch's after "torch.", numpy's and ml_dtypes') to tile scalars
_DTYPE = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
          "float64": "f64", "double": "f64", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}
# what to write in Python for a tile scalar: numpy's and torch's spelling
_PY_NAME = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
            "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16",
            "bf16": "bfloat16", "f32": "float32", "f64": "float64", "f8e4m3": "float8_e4m3fn",
            "f8e5m2": "float8_e5m2"}
# constants every kernel may pin besides its tune names and const parameters
_LAUNCH_SHAPE = ("warps", "stages")
# the warps per program the compiler accepts (a power of two up to 32)
WARPS = (1, 2, 4, 8, 16, 32)


def cdiv(a, b):
    """a / b rounded up, for grids: tilec.cdiv(n, META["BLOCK"]) (Triton's triton.cdiv)."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), as triton.next_power_of_2."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


class Error(RuntimeError):
    """A failed runtime call: .status is the tile_rt_status name ("ERR_ARGS", ...)."""

    def __init__(self, status, message):
        self.status = STATUS[status] if 0 <= status < len(STATUS) else str(status)
        super().__init__(f"{self.status}: {_python_words(message)}")


# The runtime's messages name C calls and tilec's options; in Python they say what to pass.
_REWORD = [("pass a grid to the launch", "launch it as kernel[grid](...)"),
           ("give the grid (--grid=X[,Y[,Z]])", "launch it as kernel[grid](...)"),
           ("(use -D ", "(pass it as a keyword argument: "),
           ("-D ", "the keyword argument "),
           ("set it with tile_rt_set_const", "pass it as a keyword argument"),
           ("(pass it at launch)", "(pass it as an argument)"),
           ("tile_rt_set_const", "a keyword argument")]


def _python_words(message):
    for old, new in _REWORD:
        message = message.replace(old, new)
    return message


# tile_rt_grid_fn: (ud, n, names, values, grid[3]) -> 0 or a failure
_GRID_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_double),
                            ctypes.POINTER(ctypes.c_int64))


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
                ("log", ctypes.c_void_p), ("log_ud", ctypes.c_void_p), ("debug", ctypes.c_int),
                ("interp_fallback", ctypes.c_int)]


class _LaunchInfo(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_int64 * 3), ("threads", ctypes.c_int),
                ("flops_per_program", ctypes.c_uint64), ("bytes_per_program", ctypes.c_uint64)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("is_pointer", ctypes.c_bool),
                ("is_const", ctypes.c_bool)]


def _candidates():
    """Where libtilert.so may be, in the order they are tried."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []

    def under(root):
        # an install prefix (lib/, lib64/) or a build directory (runtime/)
        return [os.path.join(root, d, "libtilert.so") for d in ("lib", "lib64", "runtime")]
    prefix = os.environ.get("TILEC_PREFIX")
    if prefix:
        out += under(prefix)
    repo = os.path.dirname(os.path.dirname(here))     # python/tilec -> the repository
    out += sorted(glob.glob(os.path.join(repo, "build*", "runtime", "libtilert.so")),
                  key=os.path.getmtime, reverse=True)
    exe = shutil.which("tilec")
    if exe:
        bindir = os.path.dirname(os.path.realpath(exe))
        out += under(os.path.dirname(bindir))        # PREFIX/bin/tilec, BUILD/tools/tilec
    # run from a clone's root after tools/setup.sh, with the module pip-installed
    out += sorted(glob.glob(os.path.join(os.getcwd(), "build*", "runtime", "libtilert.so")),
                  key=os.path.getmtime, reverse=True)
    return out


def _find_library():
    env = os.environ.get("TILEC_RT_LIB")
    if env:
        return env
    cands = _candidates()
    for c in cands:
        if os.path.exists(c):
            return c
        # a runtime-only install (or tools/gpu-pack.sh's folder) has only the SONAME file,
        # libtilert.so.N: the newest N
        versioned = sorted(glob.glob(c + ".[0-9]*"), reverse=True)
        if versioned:
            return versioned[0]
    found = ctypes.util.find_library("tilert")
    if found:
        return found
    raise OSError("libtilert.so not found (tried " + ", ".join(cands + ["the system's library "
                  "path"]) + "): set TILEC_RT_LIB to its path, TILEC_PREFIX to the prefix "
                  "or build directory that holds it, or put that build's tilec on PATH")


_lib = None


def library():
    """The loaded libtilert (ctypes.CDLL), with argument types declared.  The compiler
    library's tile_* functions (libtilec, which libtilert links) are reached through it."""
    global _lib
    if _lib is not None:
        return _lib
    L = ctypes.CDLL(_find_library())
    P, S, I, B = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_bool
    PP = ctypes.POINTER(ctypes.c_void_p)
    C = ctypes.c_char_p
    sigs = {
        "tile_rt_status_string": (C, [I]),
        "tile_rt_open": (I, [I, ctypes.POINTER(_Options), PP]),
        "tile_rt_open_error": (C, []),
        "tile_rt_close": (None, [P]),
        "tile_rt_last_error": (C, [P]),
        "tile_rt_device_name": (C, [P]),
        "tile_rt_load_bundle_file": (I, [P, C, PP]),
        "tile_rt_load_bundle": (I, [P, C, S, PP]),
        "tile_rt_load_source_file": (I, [P, C, PP]),
        "tile_rt_load_source": (I, [P, C, C, S, PP]),
        "tile_rt_module_free": (None, [P]),
        "tile_rt_get_kernel": (I, [P, C, PP]),
        "tile_rt_kernel_param_count": (I, [P]),
        "tile_rt_kernel_param_name": (C, [P, I]),
        "tile_rt_kernel_param_type": (I, [P, I, ctypes.POINTER(I), ctypes.POINTER(B)]),
        "tile_rt_launch": (I, [P, ctypes.POINTER(_Arg), I, P, ctypes.POINTER(ctypes.c_int64)]),
        "tile_rt_set_const": (I, [P, C, ctypes.c_int64, ctypes.c_double]),
        "tile_rt_launch_grid_fn": (I, [P, ctypes.POINTER(_Arg), I, P, _GRID_FN, P]),
        "tile_rt_last_variant": (C, [P]),
        "tile_rt_last_launch_info": (I, [P, ctypes.POINTER(_LaunchInfo)]),
        "tile_rt_alloc": (I, [P, S, PP]),
        "tile_rt_free": (I, [P, P]),
        "tile_rt_copy_to_device": (I, [P, P, P, S]),
        "tile_rt_copy_to_host": (I, [P, P, P, S]),
        "tile_rt_synchronize": (I, [P]),
        "tile_rt_bench": (I, [P, ctypes.POINTER(_Arg), I, ctypes.POINTER(ctypes.c_int64), I, I,
                              ctypes.POINTER(ctypes.c_double)]),
        # the compiler library, for what a source declares (kernels, const parameters, tunes)
        "tile_ctx_new": (P, []),
        "tile_ctx_free": (None, [P]),
        "tile_ctx_last_error": (C, [P]),
        "tile_program_load_file": (I, [P, C, PP]),
        "tile_program_load_source": (I, [P, C, C, S, PP]),
        "tile_program_free": (None, [P]),
        "tile_program_kernel_count": (I, [P]),
        "tile_kernel_name": (C, [P, I]),
        "tile_kernel_has_grid": (B, [P, I]),
        "tile_kernel_param_count": (I, [P, I]),
        "tile_kernel_param": (I, [P, I, I, ctypes.POINTER(_ParamInfo)]),
        "tile_kernel_tune_count": (I, [P, I]),
        "tile_ctx_define": (I, [P, C]),
        "tile_variants_get": (I, [P, I, B, PP]),
        "tile_variants_free": (None, [P]),
        "tile_variants_count": (I, [P]),
        "tile_variant_const_count": (I, [P, I]),
        "tile_variant_const": (None, [P, I, I, ctypes.POINTER(C), ctypes.POINTER(ctypes.c_double),
                                      ctypes.POINTER(B)]),
        "tile_kernel_tune": (I, [P, I, I, ctypes.POINTER(C),
                                 ctypes.POINTER(ctypes.POINTER(ctypes.c_double)),
                                 ctypes.POINTER(I)]),
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
        raise TypeError(f"stream: not a stream: {stream!r} (pass a torch.cuda.Stream, an object "
                        "with .cuda_stream, or a CUstream as an int)")
    return h or None


def _suggest(name, known):
    near = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean '{near[0]}'?" if near else ""


# ---- arrays ----------------------------------------------------------------------------
class strided:
    """Marks an array that need not be contiguous: the kernel gets the address of its first
    element and indexes it with the strides it is given (as a Triton kernel does)."""

    def __init__(self, array):
        self.array = array


class _ArrayView:
    """What a launch needs of an array argument: where it is, how many bytes from its first
    element it spans, its element type, whether it is contiguous, and where it lives."""

    def __init__(self, ptr, nbytes, scalar, what, contiguous, on_device, is_torch=False,
                 readonly=False):
        self.ptr, self.nbytes, self.scalar, self.what = ptr, nbytes, scalar, what
        self.contiguous, self.on_device, self.is_torch = contiguous, on_device, is_torch
        self.readonly = readonly


def _span(shape, strides, itemsize):
    """(bytes from the first element to past the last, contiguous?, any negative stride?)."""
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return 0, True, False
    if strides is None:
        return n * itemsize, True, False
    last, expect, contiguous = 0, itemsize, True
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expect:
            contiguous = False
        expect *= d
        last += (d - 1) * s
    neg = any(s < 0 for d, s in zip(shape, strides) if d != 1)
    return last + itemsize, contiguous, neg


def _interface_scalar(typestr, obj):
    """The tile scalar of an array-interface type string ('<f4'), or a description."""
    if typestr[1:] in _TYPESTR:
        return _TYPESTR[typestr[1:]]
    dt = getattr(obj, "dtype", None)          # ml_dtypes' bfloat16 is '<V2' with dtype.name
    name = getattr(dt, "name", None)
    if name in _DTYPE:
        return _DTYPE[name]
    return name or typestr


def _array_view(a):
    """An _ArrayView of an array argument, or None when `a` is not an array."""
    if hasattr(a, "data_ptr") and hasattr(a, "element_size") and hasattr(a, "stride"):
        dtype = str(a.dtype).replace("torch.", "")                    # torch.Tensor
        esize = a.element_size()
        nbytes, _, neg = _span(tuple(a.shape), tuple(s * esize for s in a.stride()), esize)
        return _ArrayView(a.data_ptr(), nbytes, _DTYPE.get(dtype, dtype), f"a torch.{dtype} tensor",
                          a.is_contiguous() and not neg, bool(getattr(a, "is_cuda", False)), True), neg
    cai = getattr(a, "__cuda_array_interface__", None)
    ai = None if cai is not None else getattr(a, "__array_interface__", None)
    it = cai if cai is not None else ai
    if it is None:
        return None, False
    typestr = it["typestr"]
    scalar = _interface_scalar(typestr, a)
    shape = tuple(it["shape"])
    esize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    nbytes, contiguous, neg = _span(shape, it.get("strides"), esize)
    kind = "__cuda_array_interface__ array" if cai is not None else "array"
    what = f"a {_PY_NAME.get(scalar, scalar)} {kind}"
    return _ArrayView(it["data"][0], nbytes, scalar, what, contiguous and not neg,
                      cai is not None, readonly=bool(it["data"][1])), neg


# ---- devices ---------------------------------------------------------------------------
class Device:
    """An open device: "cuda" (GPU `ordinal`) or "interp" (the CPU interpreter)."""

    def __init__(self, kind="cuda", ordinal=0, cache_dir=None, tune=None, debug=False):
        """debug: kernels compiled with their assert()s checked (a failed one raises
        tilec.Error on the interpreter; on the GPU it stops the kernel)."""
        if kind not in ("cuda", "interp"):
            raise ValueError("kind must be 'cuda' or 'interp'")
        L = library()
        self.kind, self.debug = kind, bool(debug)
        opt = _Options(ordinal, cache_dir.encode() if cache_dir else None,
                       -1 if tune is None else int(bool(tune)), -1, None, None,
                       1 if debug else -1, 0)
        h = ctypes.c_void_p()
        s = L.tile_rt_open(_CUDA if kind == "cuda" else _INTERP, ctypes.byref(opt), ctypes.byref(h))
        if s:
            msg = _text(L.tile_rt_open_error())
            if kind == "cuda":
                msg += ("; numpy arrays and CPU tensors run on the interpreter (tilec.load(...) "
                        "picks it for them, or tilec.Device('interp'))")
            raise Error(s, msg)
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


_devices = {}


def device(kind, debug=False):
    """The process's shared Device of `kind` ("cuda" or "interp"), opened on first use;
    debug=True: the one whose kernels check their assert()s."""
    key = (kind, bool(debug))
    if key not in _devices:
        _devices[key] = Device(kind, debug=debug)
    return _devices[key]


class Module:
    """A module loaded on one Device (Device.load_source / load_bundle)."""

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


def _scalar_value(p, a, where):
    """The (kind, value) of scalar argument `a` for parameter p, checked as Python sees it."""
    if p["scalar"] == "bool":
        if not isinstance(a, bool):
            raise TypeError(f"{where} is a bool: pass True or False, not {type(a).__name__}")
        return _ARG_I64, int(a)
    if p["scalar"].startswith("f") or p["scalar"] == "bf16":
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            raise TypeError(f"{where} is a float ({p['scalar']}): pass a float or an int, "
                            f"not {type(a).__name__}")
        return _ARG_F64, float(a)
    if isinstance(a, bool) or not isinstance(a, int):
        hint = " (round it with int(...))" if isinstance(a, float) else ""
        raise TypeError(f"{where} is an integer ({p['scalar']}): pass an int, not "
                        f"{type(a).__name__}{hint}")
    bits = _SIZE[p["scalar"]] * 8
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if p["scalar"][0] == "i" else (0, (1 << bits) - 1)
    if not lo <= a <= hi:
        raise ValueError(f"{where} is {p['scalar']}: {a} is outside [{lo}, {hi}]")
    return _ARG_I64, a


def _int64_bits(v):
    """An integer as the runtime's int64 carries it: a u64 of 2^63 and up by its bits."""
    return v - (1 << 64) if v >= 1 << 63 else v


class _Launch:
    """A launch's argument array, and the read-only arrays that run on copies."""

    def __init__(self, arr, guards, empty):
        self.arr, self.guards, self.empty = arr, guards, empty

    def check(self, dev, kname, status):
        """dev._check(status), an access to an empty array said in Python's words."""
        try:
            dev._check(status)
        except Error as e:
            # an empty array is passed as address 0, where no buffer is
            if self.empty and e.status == "ERR_RUN" and " at 0x0 " in str(e):
                names = ", ".join(f"'{n}'" for n in self.empty)
                what = "is an empty array" if len(self.empty) == 1 else "are empty arrays"
                raise ValueError(f"{kname}(): {names} {what} (0 elements) but the kernel "
                                 f"reads or writes it: pass an array with the elements it "
                                 f"uses ({e})") from None
            raise

    def check_unwritten(self, kname):
        for i, name, what, ptr, copy in self.guards:
            if copy.raw != ctypes.string_at(ptr, len(copy)):
                raise ValueError(f"{kname}(): argument {i + 1} '{name}': {what} is read-only "
                                 "but the kernel writes it (pass a writable array: numpy: "
                                 "a.copy()); the array was left as it was")


class Kernel:
    """A kernel of a module on one Device; call it to launch (asynchronously on a GPU)."""

    def __init__(self, module, name, handle):
        self.module, self.name, self._h = module, name, handle
        L = library()
        self.params = [_text(L.tile_rt_kernel_param_name(handle, i))
                       for i in range(L.tile_rt_kernel_param_count(handle))]
        self._ptypes = []
        for i in range(len(self.params)):
            sc, ptr = ctypes.c_int(), ctypes.c_bool()
            L.tile_rt_kernel_param_type(handle, i, ctypes.byref(sc), ctypes.byref(ptr))
            self._ptypes.append({"name": self.params[i], "pointer": ptr.value,
                                 "scalar": SCALARS[sc.value] if 0 <= sc.value < len(SCALARS)
                                 else str(sc.value)})

    def _args(self, args):
        """The runtime's argument array for `args` (one per parameter, in order), checked:
        element types match the pointees, arrays are contiguous (or wrapped in strided),
        host or device memory as the device wants, scalars of the parameter's kind."""
        interp = self.module.device.kind == "interp"
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} argument"
                            f"{'s' if len(self.params) != 1 else ''} ({', '.join(self.params)}), "
                            f"got {len(args)}")
        arr = (_Arg * max(1, len(args)))()
        guards, empty = [], []
        for i, a in enumerate(args):
            p = self._ptypes[i]
            where = f"{self.name}(): argument {i + 1} '{p['name']}'"
            allow_strided = isinstance(a, strided)
            if not p["pointer"] and not allow_strided and getattr(a, "shape", None) == () \
                    and hasattr(a, "item"):
                a = a.item()                      # a numpy scalar or 0-d tensor for a scalar
            view, neg = _array_view(a.array if allow_strided else a)
            if p["pointer"]:
                if view is None:
                    raise TypeError(f"{where} is a pointer (*{p['scalar']}): pass an array or "
                                    f"tensor of {_PY_NAME[p['scalar']]}, not {type(a).__name__}")
                if view.scalar != p["scalar"]:
                    raise TypeError(f"{where} is *{p['scalar']} but got {view.what}: convert it "
                                    f"(numpy: .astype(np.{_PY_NAME[p['scalar']]}), torch: "
                                    f".to(torch.{_PY_NAME[p['scalar']]}))")
                if neg:
                    raise ValueError(f"{where}: {view.what} with a negative stride cannot be "
                                     "passed (copy it first)")
                if not view.contiguous and not allow_strided:
                    raise ValueError(f"{where}: {view.what} is not contiguous: pass a contiguous "
                                     "copy (numpy: np.ascontiguousarray(a), torch: "
                                     "a.contiguous()), or tilec.strided(a) for the address of "
                                     "its first element when the kernel indexes by strides")
                if interp and view.on_device:
                    raise TypeError(f"{where}: {view.what} is in GPU memory but this launch runs "
                                    "on the interpreter (which reads host memory)")
                if not interp and not view.on_device:
                    raise TypeError(f"{where}: {view.what} is in host memory but this launch "
                                    "runs on the GPU: pass a CUDA tensor (torch: .cuda())")
                ptr = view.ptr
                if view.nbytes == 0:
                    ptr = None          # an empty array: any access is out of its bounds
                    empty.append(p["name"])
                elif view.readonly:
                    if not interp:
                        raise ValueError(f"{where}: {view.what} is read-only: the GPU cannot "
                                         "keep a kernel from writing it (pass a writable copy)")
                    # the interpreter runs on a copy: a kernel that writes it is refused
                    # after the launch and the read-only array is left as it was
                    copy = ctypes.create_string_buffer(ctypes.string_at(view.ptr, view.nbytes),
                                                       view.nbytes)
                    guards.append((i, p["name"], view.what, view.ptr, copy))
                    ptr = ctypes.addressof(copy)
                arr[i].kind, arr[i].buf.ptr, arr[i].buf.bytes = _ARG_PTR, ptr, view.nbytes
            else:
                if view is not None or allow_strided:
                    raise TypeError(f"{where} is a scalar ({p['scalar']}), not an array")
                kind, v = _scalar_value(p, a, where)
                arr[i].kind = kind
                if kind == _ARG_F64:
                    arr[i].f64 = v
                else:
                    arr[i].i64 = _int64_bits(v)
        return _Launch(arr, guards, empty)

    @staticmethod
    def _grid(grid):
        if grid is None:
            return None
        if isinstance(grid, int):
            grid = (grid,)
        grid = tuple(grid)
        if not 1 <= len(grid) <= 3 or not all(isinstance(g, int) and not isinstance(g, bool)
                                               for g in grid):
            raise TypeError(f"grid: expected 1 to 3 ints, got {grid!r}")
        if any(g <= 0 for g in grid):
            raise ValueError(f"grid: every size must be positive, got {grid!r}")
        g = list(grid) + [1] * (3 - len(grid))
        return (ctypes.c_int64 * 3)(*g)

    def __call__(self, *args, grid=None, stream=None, meta=None):
        """Launches.  grid: None (the grid clause), an int or 1 to 3 ints, or a callable
        given a dict of the arguments by name, `meta`, and the constants of the variant
        that runs (each variant the tuner times gets its own grid)."""
        la = self._args(args)
        if callable(grid):
            self._launch_grid_fn(la, args, grid, meta or {}, stream)
        else:
            la.check(self.module.device, self.name, library().tile_rt_launch(
                self._h, la.arr, len(args), _stream_handle(stream), self._grid(grid)))
        la.check_unwritten(self.name)

    def _launch_grid_fn(self, la, args, grid, meta, stream):
        base = dict(zip(self.params, args))
        base.update(meta)
        raised = []

        def variant_grid(ud, n, names, values, out):
            try:
                m = dict(base)
                for i in range(n):
                    v = values[i]
                    m.setdefault(_text(names[i]), int(v) if v == int(v) else v)
                g = self._grid(grid(m))
                for i in range(3):
                    out[i] = g[i]
                return 0
            except BaseException as e:      # raised again after the launch returns
                raised.append(e)
                return 1
        s = library().tile_rt_launch_grid_fn(self._h, la.arr, len(args), _stream_handle(stream),
                                             _GRID_FN(variant_grid), None)
        if raised:
            raise raised[0]
        la.check(self.module.device, self.name, s)

    def bind(self, *args, grid=None, stream=None):
        """A launcher with the arguments converted once: calling it launches again (for
        timing loops, where converting arguments per launch would cost host time)."""
        la, st = self._args(args), _stream_handle(stream)
        g = None if callable(grid) else self._grid(grid)
        L, h, n = library(), self._h, len(args)

        def launch():
            if callable(grid):          # the grid from the variant's constants, each launch
                self._launch_grid_fn(la, args, grid, {}, stream)
            else:
                la.check(self.module.device, self.name, L.tile_rt_launch(h, la.arr, n, st, g))
            la.check_unwritten(self.name)
        launch.args = args          # keeps the tensors alive as long as the launcher
        return launch

    def set_const(self, name, value):
        self.module.device._check(library().tile_rt_set_const(
            self._h, name.encode(), _int64_bits(int(value)), float(value)))

    @property
    def last_variant(self):
        return _text(library().tile_rt_last_variant(self._h))

    def last_launch_info(self):
        """What the last launch ran: grid, threads per program, and the variant's static
        flops and global bytes per program (0: unknown), for roofline figures."""
        li = _LaunchInfo()
        self.module.device._check(library().tile_rt_last_launch_info(self._h, ctypes.byref(li)))
        return {"grid": tuple(li.grid), "threads": li.threads,
                "flops_per_program": li.flops_per_program,
                "bytes_per_program": li.bytes_per_program}

    def bench(self, *args, grid=None, warmup=10, reps=100):
        """Median milliseconds of `reps` launches timed with device events."""
        la, ms = self._args(args), ctypes.c_double()
        self.module.device._check(library().tile_rt_bench(
            self._h, la.arr, len(args), self._grid(grid), warmup, reps, ctypes.byref(ms)))
        la.check_unwritten(self.name)
        return ms.value


# ---- the Triton-like interface ----------------------------------------------------------
def _load_program(ctx, prog, path, text, name):
    """Loads a .tile file (path) or source text (named `name`) with the compiler library
    into the c_void_p `prog`; a compile error raises tilec.Error."""
    L = library()
    if path is not None:
        s = L.tile_program_load_file(ctx, os.fsencode(path), ctypes.byref(prog))
    else:
        src = text.encode()
        s = L.tile_program_load_source(ctx, name.encode(), src, len(src), ctypes.byref(prog))
    if s:
        raise Error(STATUS.index("ERR_COMPILE"), _text(L.tile_ctx_last_error(ctx)))


class _Declared:
    """What a source declares of each kernel (through the compiler library): parameters in
    order with their types and const flags, tune names, whether it has a grid clause."""

    def __init__(self, path, text, name):
        L, ctx, prog = library(), library().tile_ctx_new(), ctypes.c_void_p()
        if not ctx:
            raise MemoryError("tilec: out of memory")
        try:
            _load_program(ctx, prog, path, text, name)
            self.kernels = {}
            for k in range(L.tile_program_kernel_count(prog)):
                params = []
                for i in range(L.tile_kernel_param_count(prog, k)):
                    pi = _ParamInfo()
                    L.tile_kernel_param(prog, k, i, ctypes.byref(pi))
                    params.append({"name": _text(pi.name), "pointer": pi.is_pointer,
                                   "const": pi.is_const, "scalar": SCALARS[pi.type]})
                tunes, tune_values = [], {}
                for i in range(L.tile_kernel_tune_count(prog, k)):
                    nm, vals, nv = ctypes.c_char_p(), ctypes.POINTER(ctypes.c_double)(), ctypes.c_int()
                    ok = L.tile_kernel_tune(prog, k, i, ctypes.byref(nm), ctypes.byref(vals),
                                            ctypes.byref(nv)) == 0
                    tunes.append(_text(nm.value))
                    if ok:      # a list of literal numbers: a pin must be one of them
                        tune_values[tunes[-1]] = [vals[j] for j in range(nv.value)]
                self.kernels[_text(L.tile_kernel_name(prog, k))] = {
                    "params": params, "tunes": tunes, "tune_values": tune_values,
                    "has_grid": L.tile_kernel_has_grid(prog, k)}
        finally:
            if prog:
                L.tile_program_free(prog)
            L.tile_ctx_free(ctx)


def _where_lives(args):
    """'cuda' when the pointer arguments are device memory, 'interp' when host memory,
    None when there are none; a mix is an error."""
    kinds = set()
    for a in args:
        v, _ = _array_view(a.array if isinstance(a, strided) else a)
        if v is not None:
            kinds.add("cuda" if v.on_device else "interp")
    if len(kinds) > 1:
        raise TypeError("the arrays of one launch must all be host memory (the interpreter) "
                        "or all GPU memory, not both")
    return kinds.pop() if kinds else None


def _torch_stream(args):
    """torch's current stream when an argument is a torch CUDA tensor, as Triton launches."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for a in args:
        a = a.array if isinstance(a, strided) else a
        if isinstance(a, torch.Tensor) and a.is_cuda:
            return torch.cuda.current_stream(a.device).cuda_stream
    return None


_DEFAULT = object()


class JITKernel:
    """A kernel of tilec.load(...): k[grid](*args, **kwargs) or k(*args, **kwargs).  Positional
    and keyword arguments fill the runtime parameters; the other keywords (const parameters,
    tuned constants, warps, stages) fix constants for this call only."""

    def __init__(self, module, name, decl):
        self._module, self.__name__, self.name = module, name, name
        self._decl = decl
        self.params = [p["name"] for p in decl["params"] if not p["const"]]
        self.constants = [p["name"] for p in decl["params"] if p["const"]]
        self.tunes = list(decl["tunes"])
        self._const_params = {p["name"]: p for p in decl["params"] if p["const"]}
        self._kernels = {}
        self.last_variant = None

    def __repr__(self):
        return f"<tilec kernel {self.name}({', '.join(self.params)})>"

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._launch(grid, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._launch(kwargs.pop("grid", None), args, kwargs)

    def _split(self, args, kwargs):
        """(runtime arguments in order, {constant: value}, stream) from one call's arguments."""
        stream = kwargs.pop("stream", _DEFAULT)
        if len(args) > len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} positional argument"
                            f"{'s' if len(self.params) != 1 else ''} ({', '.join(self.params)}), "
                            f"got {len(args)}")
        vals = dict(zip(self.params, args))
        consts = {}
        pinnable = self.constants + self.tunes + [n for n in _LAUNCH_SHAPE if n not in self.tunes]
        for key, v in kwargs.items():
            if key in self.params:
                if key in vals:
                    raise TypeError(f"{self.name}() got argument '{key}' twice")
                vals[key] = v
            elif key in pinnable:
                consts[key] = self._constant(key, v)
            else:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'"
                                f"{_suggest(key, self.params + pinnable)}")
        missing = [p for p in self.params if p not in vals]
        if missing:
            raise TypeError(f"{self.name}() missing argument{'s' if len(missing) > 1 else ''} "
                            + ", ".join(f"'{m}'" for m in missing))
        unset = [c for c in self.constants if c not in consts]
        if unset:
            raise TypeError(f"{self.name}(): const parameter{'s' if len(unset) > 1 else ''} "
                            + ", ".join(f"'{c}'" for c in unset) + " need" +
                            ("" if len(unset) > 1 else "s") + " a value: pass " +
                            ", ".join(f"{c}=..." for c in unset) + " as keyword arguments")
        return [vals[p] for p in self.params], consts, stream

    def _constant(self, key, v):
        """The value of constant `key` checked as strictly as a runtime argument: a const
        parameter by its type (a bool takes True or False, an integer an int in range);
        a tuned constant any number (its tune list is what the tuner searches, not a
        limit, as -D NAME=V on the command line); warps and stages positive ints, warps
        a power of two up to 32 as the compiler wants."""
        where = f"{self.name}(): constant '{key}'"
        p = self._const_params.get(key)
        if hasattr(v, "item") and getattr(v, "shape", None) == ():
            v = v.item()                          # a numpy scalar
        if p:
            value = _scalar_value(p, v, where)[1]
            return bool(value) if p["scalar"] == "bool" else value
        if key in _LAUNCH_SHAPE:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{where} is a count: pass an int, not {type(v).__name__}")
            if key == "warps" and v not in WARPS:
                raise ValueError(f"{where}: warps={v} must be a power of two up to 32 "
                                 f"({', '.join(map(str, WARPS))})")
            if v < 1:
                raise ValueError(f"{where}: {key}={v} must be positive")
            return v
        if isinstance(v, bool):
            return int(v)
        if not isinstance(v, (int, float)):
            raise TypeError(f"{where}: pass a number, not {type(v).__name__}")
        return v

    @property
    def tune_values(self):
        """{tuned constant: the values its tune list gives} (a list that is not made of
        literal numbers is left out)."""
        return {k: [int(x) if x == int(x) else x for x in v]
                for k, v in self._decl["tune_values"].items()}

    def variants(self, **constants):
        """The variants the tuner considers for these constants (every const parameter
        given; a tuned constant, warps or stages given pins it), each a dict of its
        constants: const parameters, tuned constants, warps, stages.  Clauses that read
        only constants are applied; those that read run-time arguments are checked at
        launch.  Each dict can be passed back as keywords to run that variant:
        `for v in k.variants(): k[grid](*args, **v)` runs every one (on the interpreter
        too, where a launch otherwise runs the first that admits the arguments)."""
        for key in constants:
            if key not in self.constants + self.tunes + list(_LAUNCH_SHAPE):
                raise TypeError(f"{self.name}.variants() got an unexpected keyword argument "
                                f"'{key}'{_suggest(key, self.constants + self.tunes)}")
        consts = {k: self._constant(k, v) for k, v in constants.items()}
        unset = [c for c in self.constants if c not in consts]
        if unset:
            raise TypeError(f"{self.name}.variants(): const parameter"
                            f"{'s' if len(unset) > 1 else ''} " +
                            ", ".join(f"'{c}'" for c in unset) + " need" +
                            ("" if len(unset) > 1 else "s") + " a value")
        return self._module._variants(self.name, consts)

    @property
    def last_config(self):
        """The constants of the variant the last launch ran, as a dict
        ({"BLOCK": 1024, "warps": 4, "stages": 2}); None before the first launch."""
        if not self.last_variant:
            return None
        config = _parse_variant(self.last_variant)
        for name, p in self._const_params.items():
            if p["scalar"] == "bool" and name in config:
                config[name] = bool(config[name])
        return config

    def _kernel(self, where, pins):
        """The runtime kernel for device `where` whose pinned names are `pins`: one module
        per set of names, so that a name pinned by one call never binds a later one."""
        key = (where, pins)
        k = self._kernels.get(key)
        if k is None:
            k = self._module._runtime_module(where, pins).kernel(self.name)
            self._kernels[key] = k
        return k

    def _launch(self, grid, args, kwargs):
        kwargs = dict(kwargs)
        check = kwargs.pop("check", False)   # tilec check first: tilec/check.py
        args, consts, stream = self._split(args, kwargs)
        where = _where_lives(args) or self._module._default_device()
        if self._module.device_kind and where != self._module.device_kind:
            raise TypeError(f"{self.name}(): this module runs on '{self._module.device_kind}' "
                            f"but the arrays are {'GPU' if where == 'cuda' else 'host'} memory")
        pins = frozenset(c for c in consts if c not in self.constants)
        k = self._kernel(where, pins)
        for name, v in consts.items():
            k.set_const(name, v)
        if grid is None and not self._decl["has_grid"]:
            raise TypeError(f"{self.name}() has no grid clause: launch it as "
                            f"{self.name}[grid](...), grid an int or a tuple of 1 to 3 ints")
        if stream is _DEFAULT:
            stream = _torch_stream(args) if where == "cuda" else None
        if check:
            from .check import check_call
            if callable(grid) and not self._decl["has_grid"]:
                raise TypeError(f"{self.name}(check=True): give the grid as ints: tilec check runs "
                                f"each variant with one grid, and this kernel has no grid clause")
            self.check_report = check_call(self, args, consts, None if callable(grid) else grid, where)
        # a callable grid sees the arguments, this call's constants and the constants of
        # the variant that runs (Triton's META)
        k(*args, grid=grid, stream=stream, meta=consts)
        self.last_variant = k.last_variant


def _parse_variant(text):
    """{"BLOCK": 1024, "warps": 4} from the runtime's "BLOCK=1024, warps=4; ..." text."""
    out = {}
    for item in text.split(";")[0].split(","):
        name, eq, value = item.strip().partition("=")
        if not eq:
            continue
        try:
            out[name] = int(value)
        except ValueError:
            try:
                out[name] = float(value)
            except ValueError:
                out[name] = value
    return out


class JITModule:
    """A .tile source (tilec.load): its kernels as attributes (module.softmax) or items
    (module["softmax"]).  Each launch runs on the device its arrays live on, loading the
    source there on first use."""

    def __init__(self, path=None, text=None, name=None, device=None, debug=False):
        self.path, self._text, self._name = path, text, name or path or "<source>"
        self.debug = bool(debug)
        if device not in (None, "cuda", "interp"):
            raise ValueError("device must be None (from the arguments), 'cuda' or 'interp'")
        self.device_kind = device
        self._decl = _Declared(path, text, self._name).kernels
        self._mods = {}
        self._jit = {}

    @property
    def kernels(self):
        return list(self._decl)

    def __getitem__(self, name):
        if name not in self._decl:
            raise KeyError(f"no kernel '{name}' in '{self._name}'{_suggest(name, self._decl)} "
                           f"(it has {', '.join(self._decl) or 'none'})")
        if name not in self._jit:
            self._jit[name] = JITKernel(self, name, self._decl[name])
        return self._jit[name]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(e.args[0]) from None

    def __dir__(self):
        return list(super().__dir__()) + list(self._decl)

    def _default_device(self):
        """For a launch without arrays: this module's device, else the GPU where there is
        one, else the interpreter."""
        if self.device_kind:
            return self.device_kind
        try:
            device("cuda", self.debug)
            return "cuda"
        except Error:
            return "interp"

    def _variants(self, kname, consts):
        """tile_variants_get for kernel `kname` with `consts` as defines: a dict per variant."""
        L, ctx, prog = library(), library().tile_ctx_new(), ctypes.c_void_p()
        if not ctx:
            raise MemoryError("tilec: out of memory")
        vs = ctypes.c_void_p()
        scalars = {p["name"]: p["scalar"] for p in self._decl[kname]["params"]}
        try:
            for name, v in consts.items():
                text = "true" if v is True else "false" if v is False else repr(v)
                if L.tile_ctx_define(ctx, f"{name}={text}".encode()):
                    raise ValueError(f"{kname}.variants(): {name}={v!r}: "
                                     f"{_text(L.tile_ctx_last_error(ctx))}")
            _load_program(ctx, prog, self.path, self._text, self._name)
            k = [_text(L.tile_kernel_name(prog, i))
                 for i in range(L.tile_program_kernel_count(prog))].index(kname)
            if L.tile_variants_get(prog, k, True, ctypes.byref(vs)):
                raise Error(STATUS.index("ERR_COMPILE"), _text(L.tile_ctx_last_error(ctx)))
            out = []
            for i in range(L.tile_variants_count(vs)):
                d = {}
                for j in range(L.tile_variant_const_count(vs, i)):
                    nm, val, fl = ctypes.c_char_p(), ctypes.c_double(), ctypes.c_bool()
                    L.tile_variant_const(vs, i, j, ctypes.byref(nm), ctypes.byref(val),
                                         ctypes.byref(fl))
                    name = _text(nm.value)
                    v = val.value if fl.value else int(val.value)
                    d[name] = bool(v) if scalars.get(name) == "bool" else v
                out.append(d)
            return out
        finally:
            if vs:
                L.tile_variants_free(vs)
            if prog:
                L.tile_program_free(prog)
            L.tile_ctx_free(ctx)

    def _runtime_module(self, where, pins):
        key = (where, pins)
        if key not in self._mods:
            dev = device(where, self.debug)
            if self.path is not None:
                self._mods[key] = dev.load_source(self.path)
            else:
                self._mods[key] = dev.load_source(self._text, name=self._name)
        return self._mods[key]


def cuda_available():
    """Whether the runtime opens a GPU here (a driver and a device)."""
    try:
        device("cuda")
        return True
    except Error:
        return False


class DeviceArray:
    """GPU memory allocated by tilec (for machines without torch): to_device(host_array)
    makes one, .numpy() copies it back.  It has __cuda_array_interface__, so a launch with
    it runs on the GPU."""

    def __init__(self, shape, typestr, dtype=None):
        self.shape, self.typestr, self.dtype = tuple(shape), typestr, dtype
        n = 1
        for d in self.shape:
            n *= d
        self.nbytes = n * int(typestr[2:])
        self._dev, p = device("cuda"), ctypes.c_void_p()
        self._dev._check(library().tile_rt_alloc(self._dev._h, max(1, self.nbytes), ctypes.byref(p)))
        self._ptr = p.value
        self.__cuda_array_interface__ = {"data": (self._ptr, False), "shape": self.shape,
                                         "typestr": typestr, "strides": None, "version": 3}

    def numpy(self):
        import numpy as np
        out = np.empty(self.shape, dtype=self.dtype if self.dtype is not None else self.typestr)
        self._dev.synchronize()
        self._dev._check(library().tile_rt_copy_to_host(
            self._dev._h, out.__array_interface__["data"][0], self._ptr, self.nbytes))
        return out

    def __del__(self):
        if getattr(self, "_ptr", None) and self._dev._h:
            library().tile_rt_free(self._dev._h, self._ptr)
            self._ptr = None


def to_device(host):
    """A DeviceArray holding a copy of a contiguous host array (numpy, __array_interface__)."""
    ai = getattr(host, "__array_interface__", None)
    if ai is None:
        raise TypeError(f"to_device: {type(host).__name__} has no __array_interface__")
    _, contiguous, _ = _span(tuple(ai["shape"]), ai.get("strides"), int(ai["typestr"][2:]))
    if not contiguous:
        raise ValueError("to_device: the array is not contiguous (np.ascontiguousarray(a))")
    d = DeviceArray(ai["shape"], ai["typestr"], getattr(host, "dtype", None))
    d._dev._check(library().tile_rt_copy_to_device(d._dev._h, d._ptr, ai["data"][0], d.nbytes))
    return d


def load(path_or_source, device=None, name=None, debug=False):
    """A .tile file by path (or source text, named `name` in messages) with its kernels as
    attributes: tilec.load("softmax.tile").softmax.  device: None to run each launch where
    its arrays live, or "cuda" / "interp" to insist on one.  debug=True: the kernels check
    their assert()s (a failed one raises tilec.Error), on the interpreter and the GPU."""
    if name is None and os.path.exists(path_or_source):
        return JITModule(path=path_or_source, device=device, debug=debug)
    if name is None and path_or_source.endswith(".tile") and "\n" not in path_or_source:
        raise FileNotFoundError(f"no such file: '{path_or_source}'")
    return JITModule(text=path_or_source, name=name or "<source>", device=device, debug=debug)


def do_bench(fn, warmup=25, rep=100, quantiles=None, sync=None):
    """Times fn() like triton.testing.do_bench: runs it for about `warmup` ms, then for about
    `rep` ms, each call timed; returns the median in ms (or the given quantiles).  With torch
    and a GPU, calls are timed with CUDA events on the current stream and the L2 cache is
    not flushed; otherwise with the host clock, calling sync() (default: synchronizing the
    devices tilec opened) after each call."""
    torch = sys.modules.get("torch")
    use_events = torch is not None and torch.cuda.is_available()
    if sync is None:
        def sync():
            if use_events:
                torch.cuda.synchronize()
            for d in _devices.values():
                d.synchronize()
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    sync()
    est_ms = max((time.perf_counter() - t0) * 1e3 / 5, 1e-4)
    n_warm, n_rep = max(1, int(warmup / est_ms)), max(1, int(rep / est_ms))
    for _ in range(n_warm):
        fn()
    sync()
    times = []
    for _ in range(n_rep):
        if use_events:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            sync()
            times.append(s.elapsed_time(e))
        else:
            t = time.perf_counter()
            fn()
            sync()
            times.append((time.perf_counter() - t) * 1e3)
    times.sort()

    def q(x):
        i = min(len(times) - 1, max(0, round(x * (len(times) - 1))))
        return times[i]
    if quantiles is not None:
        return [q(x) for x in quantiles]
    return q(0.5)
