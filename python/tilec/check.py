"""check=True of a kernel call (tilec.load(...).NAME(..., check=True)): before the launch,
`tilec check` runs every variant of the kernel on the call's device and on the interpreter
with the call's inputs (saved as .npy files) and compares what each writes
(docs/tools.md, "tilec check").  A variant out of tolerance, out of bounds or racing
raises CheckError with the report; then the launch runs as without check."""
import os
import shutil
import subprocess
import sys
import tempfile


class CheckError(AssertionError):
    """A variant of the kernel failed `tilec check`; .report holds its output."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def _tilec_binary():
    """$TILEC_BIN, else the tilec beside the build's libtilert (BUILD/tools/tilec), else the
    repository's newest build, else tilec on PATH."""
    env = os.environ.get("TILEC_BIN")
    if env:
        return env
    from . import _find_library
    try:
        lib = os.path.realpath(_find_library())
        cand = os.path.join(os.path.dirname(os.path.dirname(lib)), "tools", "tilec")
        if os.access(cand, os.X_OK):
            return cand
    except OSError:
        pass
    exe = shutil.which("tilec")
    if exe:
        return exe
    raise FileNotFoundError("check=True needs the tilec command: set TILEC_BIN to its path "
                            "or put it on PATH")


def _host_array(a):
    """A numpy copy of an array argument (numpy, or a torch tensor on any device)."""
    import numpy as np
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        t = a.detach().contiguous().cpu()
        if t.dtype == torch.bfloat16:      # numpy has no bf16: its bits, as tilec reads <V2
            return t.view(torch.int16).numpy().view("V2")
        return t.numpy()
    return np.ascontiguousarray(a)


def check_call(kernel, args, consts, grid, where):
    """Runs `tilec check` for kernel (a JITKernel) on this call; returns the report, or
    raises CheckError."""
    from . import strided, _array_view
    mod = kernel._module
    with tempfile.TemporaryDirectory(prefix="tilec-check-") as tmp:
        path = mod.path
        if path is None:
            path = os.path.join(tmp, "source.tile")
            with open(path, "w") as f:
                f.write(mod._text)
        cmd = [_tilec_binary(), "check", path, "--kernel", kernel.name, f"--device={where}"]
        for name, v in consts.items():
            v = str(v).lower() if isinstance(v, bool) else v
            cmd.append(f"{name}={v}" if name in kernel.constants else f"-D{name}={v}")
        for name, a in zip(kernel.params, args):
            if isinstance(a, strided):
                a = a.array
            view, _ = _array_view(a)
            if view is None:
                v = int(a) if isinstance(a, bool) else a
                cmd.append(f"{name}={v}")
                continue
            import numpy as np
            file = os.path.join(tmp, f"{name}.npy")
            np.save(file, _host_array(a))
            cmd.append(f"{name}=@{file}")
        if grid is not None:
            g = (grid,) if isinstance(grid, int) else tuple(grid)
            cmd.append("--grid=" + ",".join(str(int(x)) for x in g))
        r = subprocess.run(cmd, capture_output=True, text=True)
    report = r.stdout + r.stderr
    if r.returncode != 0:
        raise CheckError(f"{kernel.name}: tilec check failed:\n{report}", report)
    return report
