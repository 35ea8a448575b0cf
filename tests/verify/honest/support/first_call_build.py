"""What Triton does at a kernel's first call, for tests/verify/honest/first_call_compiler.py on machines without a
GPU: starts the Python interpreter and a C compiler as processes, writes into its cache under TRITON_CACHE_DIR
(scratch, in the sandbox) and loads the library it built. A library, as Triton is: the candidate's own source
starts no process."""
import ctypes
import os
import subprocess
import sys

_SOURCE = "int rnx_rows_ok(int rows) { return rows >= 0; }\n"


def build_launcher():
    cache = os.path.join(os.environ.get("TRITON_CACHE_DIR", os.getcwd()), "first_call")
    os.makedirs(cache, exist_ok=True)
    # The interpreter by its installed path (an embedded interpreter's sys.executable may be a pyenv shim).
    python = os.path.join(sys.base_exec_prefix, "bin", "python3")
    subprocess.run([python if os.path.exists(python) else sys.executable, "-c", "pass"], check=True)
    source = os.path.join(cache, "launcher.c")
    with open(source, "w") as f:
        f.write(_SOURCE)
    library = os.path.join(cache, "launcher.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", source, "-o", library], check=True)
    return ctypes.CDLL(library)
