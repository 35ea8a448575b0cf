# The Python half of `rnx verify`, embedded into rnx-verify-worker: loads references and candidates, makes
# KernelBench inputs, scans candidate source, and guards torch's namespace against monkey-patching.
#
# The C++ worker drives the stages and does every comparison in libtorch, so a candidate that patches Python
# (torch.allclose, torch.testing, ...) cannot change a verdict; what it can patch is the reference's Python,
# which `namespace_guard` detects and undoes.
import ast
import os
import re
import sys
import threading
import types

import torch

import rnx_support  # the runner's half, already imported into this interpreter by the worker

class VerifyError(Exception):
    """A problem with a reference or candidate file, reported to the user with this message."""


class Loaded:
    def __init__(self, module, path, kind, entry, target):
        self.module = module
        self.path = path
        self.kind = kind  # rnx_support.FUNCTION | rnx_support.KERNELBENCH
        self.entry = entry
        self.target = target  # the function, or the nn.Module class


def load(path, entry, role, module_name):
    """Imports `path` and finds its entry by the runner's rule (rnx_support.find_entry), so `rnx bench` and
    `rnx verify` agree on what every file is. role: "reference" (a function or KernelBench's Model) or "candidate"
    (a function or ModelNew, falling back to Model). The file's folder goes last on sys.path: a candidate must not
    shadow modules the reference imports."""
    try:
        module, _ = rnx_support.import_file(path, module_name, folder_first=False)
    except SyntaxError as e:
        raise VerifyError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except rnx_support.KernelError as e:
        raise VerifyError(f"{path}: {e}") from None
    try:
        kind, name, target = rnx_support.find_entry(module, module_name, entry, prefer_new=role == "candidate")
    except rnx_support.EntryError as e:
        if e.found_type is not None:
            raise VerifyError(f"{path}: the {role} entry '{e.name}' is a {e.found_type}, not a function") from None
        hint = ("it defines: " + ", ".join(e.defined)) if e.defined else "it defines no functions or classes"
        raise VerifyError(f"{path}: the {role} entry '{e.name}' is not defined ({hint}); pass --{role}-entry NAME") \
            from None
    return Loaded(module, path, kind, name, target)


def kernelbench_info(ref):
    """Whether the reference file provides get_inputs()/get_init_inputs(), and the sizes the shape sweep may vary:
    the module-level integers that get_inputs() reads, and the sizes its tensors have that no such integer (nor
    batch_size) names. The second kind are literal shapes (`torch.randn(1024, 1024)`, as KernelBench's own
    examples write them); they are keyed by their value ("1024"), as the sizes of a manifest's inputs are, and a
    case that changes one changes it wherever it occurs, in every input and in get_init_inputs() (_resized)."""
    m = ref.module
    if not callable(getattr(m, "get_inputs", None)):
        raise VerifyError(f"{ref.path}: a KernelBench reference needs get_inputs() (and get_init_inputs())")
    if not callable(getattr(m, "get_init_inputs", None)):
        raise VerifyError(f"{ref.path}: a KernelBench reference needs get_init_inputs() beside get_inputs()")
    names = set(m.get_inputs.__code__.co_names)
    sizes = {n: v for n, v in vars(m).items()
             if n in names and type(v) is int and v > 1 and n != "batch_size"}
    m._rnx_defaults = dict(sizes)  # every case starts from the declared sizes, then applies its own
    named = set(sizes.values())
    if type(getattr(m, "batch_size", None)) is int:
        named.add(m.batch_size)
    try:
        torch.manual_seed(0)
        shapes = [tuple(t.shape) for t in m.get_inputs() if isinstance(t, torch.Tensor)]
    except Exception:  # noqa: BLE001 - the smoke stage reports a reference that cannot make its inputs
        shapes = []
    for d in sorted({d for shape in shapes for d in shape if d > 1 and d not in named}, reverse=True):
        sizes[str(d)] = d
    return {"batch": type(getattr(m, "batch_size", None)) is int, "dims": sizes}


def _literal_sizes(dims):
    """{old: new} for the entries of `dims` that name a literal size by its value and change it."""
    return {int(name): value for name, value in dims.items() if name.isdigit() and int(name) != value}


def _resized(t, sizes):
    """`t` with every dimension whose size is a key of `sizes` made that value's size: cut, or extended by
    repeating its own leading values along that dimension, so values keep their distribution and integer inputs
    (indices, labels) stay in the range they had."""
    for dim, size in enumerate(t.shape):
        new = sizes.get(size)
        if new is None:
            continue
        if new <= size:
            t = t.narrow(dim, 0, new)
        else:
            t = torch.cat([t] * -(-new // size), dim=dim).narrow(dim, 0, new)
    return t.contiguous()


def _set_sizes(modules, batch, dims):
    """The declared sizes (kernelbench_info), then the case's own, in the reference and the candidate."""
    rnx_support.set_sizes(modules, batch, {**(getattr(modules[0], "_rnx_defaults", None) or {}), **dims})


def kernelbench_inputs(ref, cand, batch, dims, seed):
    """get_inputs() of the reference under `seed`, with batch_size and the varied sizes set in both files, on the
    CPU (each case then takes them to its dtype and device)."""
    _set_sizes([ref.module, cand.module if cand is not None else None], batch, dims)
    try:
        inputs = rnx_support.get_inputs(ref.module, ref.path, seed, "cpu")
    except rnx_support.KernelError as e:
        raise VerifyError(str(e)) from None
    out = []
    literal = _literal_sizes(dims)
    for t in inputs:
        if not isinstance(t, torch.Tensor):
            raise VerifyError(f"{ref.path}: get_inputs() gave a {type(t).__name__}; only tensors can be verified")
        out.append(_resized(t, literal) if literal else t)
    return out


def bind(loaded, ref, dtype, device, seed, batch, dims, parameters_seed=0):
    """A callable for one dtype and device. KernelBench classes are built from the reference's
    get_init_inputs() under the same seed, so Model and ModelNew start from the same weights.
    One instance serves every case whose constructor arguments are the same (as a user builds a model once and
    calls it at every batch): a kernel that sizes its work buffers at its first call is then called at other sizes.
    parameters_seed (non-zero): the instance's parameters perturbed (perturb_parameters), a separate instance."""
    if loaded.kind == rnx_support.FUNCTION:
        return loaded.target
    _set_sizes([ref.module, loaded.module], batch, dims)
    init = rnx_support.get_init_inputs(ref.module, seed, device)
    literal = _literal_sizes(dims)
    if literal:  # a literal size changed in the inputs is changed where the constructor is given it too
        init = [literal.get(v, v) if type(v) is int else v for v in init]
    key = (id(loaded), dtype, str(device), _init_key(init), parameters_seed)
    model = _instances.get(key)
    if model is not None:
        return model
    model = rnx_support.build_model(loaded.target, init, rnx_support.DTYPES[dtype], torch.device(device), seed)
    model._rnx_parameters = ""
    if parameters_seed:
        model._rnx_parameters = perturb_parameters(model, loaded, ref, init, dtype, device, seed, parameters_seed)
    if len(_instances) >= 16:  # bounded: a sweep over many constructor sizes builds one instance each
        _instances.pop(next(iter(_instances)))
    _instances[key] = model
    return model


_instances = {}


def _init_key(init):
    """The constructor's arguments as a dictionary key: tensors by shape and dtype (get_init_inputs() draws them
    under the same seed every time), everything else by its repr."""
    return tuple((tuple(v.shape), str(v.dtype)) if isinstance(v, torch.Tensor) else repr(v) for v in init)


# ---- module parameters: varied, so a rewrite cannot assume their defaults ----

_RUNNING_STATS = ("running_mean", "running_var")


def _perturbable(model):
    """{name: tensor} of what a perturbation may change: every floating parameter, and the running statistics of
    normalisation layers (buffers that are statistics, not masks or tables whose values are structure)."""
    found = {name: p for name, p in model.named_parameters() if p.is_floating_point()}
    for name, b in model.named_buffers():
        if b.is_floating_point() and name.rsplit(".", 1)[-1] in _RUNNING_STATS:
            found[name] = b
    return found


def _noise(name, shape, seed):
    """The same standard normal draw for a name and shape in every process and dtype (crc32, not hash(): Python
    randomises str hashes per process)."""
    import zlib
    g = torch.Generator().manual_seed((seed * 1000003 + zlib.crc32(name.encode())) % (2 ** 63))
    return torch.randn(tuple(shape), generator=g, dtype=torch.float32)


def perturb_parameters(model, loaded, ref, init, dtype, device, seed, parameters_seed):
    """Moves every perturbable tensor (_perturbable) by one random draw keyed on its name and shape: a parameter by
    half its own root-mean-square (half of one where that is zero: a LayerNorm's ones and zeros become values
    around them), a running variance multiplied by exp(N(0, 0.5^2)) so it stays positive. The reference's tensors
    of the same name and shape get the same draw. A candidate whose perturbable names and shapes are not the
    reference's is left as built; returns why (the judge marks that for review), else a note of what moved."""
    mine = _perturbable(model)
    if loaded is not ref:
        reference_model = rnx_support.build_model(ref.target, init, rnx_support.DTYPES[dtype], torch.device(device),
                                                  seed)
        theirs = {n: tuple(t.shape) for n, t in _perturbable(reference_model).items()}
        del reference_model
        own = {n: tuple(t.shape) for n, t in mine.items()}
        if own != theirs:
            missing = sorted(set(theirs) - set(own))
            extra = sorted(set(own) - set(theirs))
            reshaped = sorted(n for n in set(own) & set(theirs) if own[n] != theirs[n])
            parts = []
            if missing:
                parts.append("the reference's " + ", ".join(missing[:4]) + " not found")
            if extra:
                parts.append("its own " + ", ".join(extra[:4]) + " not in the reference")
            if reshaped:
                parts.append(", ".join(reshaped[:4]) + " of another shape")
            return "unmatched: " + "; ".join(parts)
    with torch.no_grad():
        for name, t in mine.items():
            base = t.detach().to("cpu", torch.float32)
            noise = _noise(name, base.shape, parameters_seed)
            if name.rsplit(".", 1)[-1] == "running_var":
                moved = base * torch.exp(0.5 * noise)
            else:
                rms = float(base.pow(2).mean().sqrt()) if base.numel() else 0.0
                moved = base + 0.5 * (rms if rms > 0 else 1.0) * noise
            t.copy_(moved.to(t.device, t.dtype))
    return "perturbed: " + ", ".join(sorted(mine)[:6]) + (f" and {len(mine) - 6} more" if len(mine) > 6 else "") \
        if mine else "none"


def parameters_note(model):
    """What bind() did to a model's parameters ("" for a function or an unperturbed instance)."""
    return getattr(model, "_rnx_parameters", "") or ""


def python_threads():
    return threading.active_count()


# ---- torch's own compiler stack: the baseline, not the candidate's doing ----

def import_compiler_stack(device="cpu", candidate=""):
    """Imports what torch itself patches or starts when any code touches its compiler, before the candidate is
    imported and before the judge's "before" snapshot and thread count: torch._dynamo wraps torch.manual_seed
    (and more) at import, and torch.compiler.disable, torch.compile and every kernel library that decorates its
    functions at import pull it in. Done here, those effects are torch's baseline; done by the candidate's import,
    they were reported as the candidate patching globals. Inductor compiles in this process, one file at a time
    (compile_threads = 1): its pool of compile workers would be threads and processes left running after the
    call, which extra_threads rightly reports. Triton, where installed, is imported here for the same reason.
    Its caches (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR) are in the scratch folder's .compiled folder already,
    the one place the sandbox lets compiled code be loaded from.
    On a GPU, torch's compiler keeps a thread it starts at its first compile (seen on the H200: a torch.compile
    candidate left one Python thread more than the baseline): for a candidate whose source compiles, one tiny
    compile on its device runs here first, so that thread is in the baseline too.
    Returns the seconds spent, which the report shows apart from the candidate's own time."""
    import importlib.util
    import time as _time
    start = _time.perf_counter()
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    import torch._dynamo  # noqa: F401
    import torch._inductor.config as inductor_config
    inductor_config.compile_threads = 1
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401
    if device.startswith("cuda") and _source_compiles(candidate):
        _warm_compile(device)
    import_installed_packages(candidate)
    return _time.perf_counter() - start


def _installed_folders():
    """The folders installed packages live in (site-packages and the standard library), never the candidate's."""
    import site
    import sysconfig
    folders = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenvs of old
        pass
    return tuple(os.path.realpath(f) + os.sep for f in folders if f)


def _imported_names(path):
    """Absolute module names the candidate's source imports (read, never run): `import a.b` gives a.b,
    `from a.b import c` gives a.b and a.b.c (c may be a submodule)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names.extend(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return names


def import_installed_packages(candidate):
    """Imports the installed packages the candidate's source names, before the judge counts the threads and takes
    the snapshot it compares with: what an installed library does at import (a thread pool, one thread per CPU;
    patching torch) is the baseline, like torch's own. Only modules found in site-packages or the standard
    library are imported, never a file of the candidate's folder, and a module that fails to import is left for
    the candidate's own import to report. Returns the names imported."""
    import importlib
    import importlib.util
    if not candidate.endswith(".py"):
        return []
    installed = _installed_folders()
    done = []
    for name in _imported_names(candidate):
        if name in sys.modules:
            continue
        top = name.split(".")[0]
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        origin = getattr(spec, "origin", None) if spec else None
        if not origin or not os.path.realpath(origin).startswith(installed):
            continue
        try:
            if "." in name and importlib.util.find_spec(name) is None:
                continue  # `from package import function`: the package alone
            importlib.import_module(name)
            done.append(name)
        except Exception:  # noqa: BLE001 - the candidate's own import reports it
            continue
    return done


def _source_compiles(path):
    """Whether a candidate's source names torch's compiler (a hint read before it is imported, never a verdict)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return re.search(r"\btorch\.compile\b|\bfrom\s+torch\s+import\s+[^\n]*\bcompile\b", f.read()) is not None
    except OSError:
        return False


def _warm_compile(device):
    compiled = torch.compile(lambda x: x * 2 + 1)
    compiled(torch.ones(8, device=device))


# ---- namespace guard: the reference's Python must stay the reference's ----

_GUARDED_MODULES = ["torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.cuda",
                    "torch.testing", "time", "timeit"]


def _guarded_items():
    items = {}
    for name in _GUARDED_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        for attr, value in list(vars(module).items()):
            # Public functions and classes only: torch keeps mutable private state (flags, caches, lazily bound
            # helpers) that changes legitimately during calls.
            if not attr.startswith("_") and callable(value) and not isinstance(value, types.ModuleType):
                items[(name, attr)] = value
    for cls_name, cls in (("torch.Tensor", torch.Tensor), ("torch.nn.Module", torch.nn.Module),
                          ("torch.cuda.Event", getattr(torch.cuda, "Event", None))):
        if cls is None:
            continue
        for attr, value in list(vars(cls).items()):
            if not attr.startswith("__") or attr in ("__add__", "__matmul__", "__mul__", "__call__"):
                items[(cls_name, attr)] = value
    return items


def _global_settings():
    return {
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.is_grad_enabled()": torch.is_grad_enabled(),
    }


class NamespaceGuard:
    def __init__(self):
        self.items = _guarded_items()
        self.settings = _global_settings()

    def check_and_restore(self):
        """Returns descriptions of what changed since the snapshot, after putting the originals back."""
        changed = []
        now = _guarded_items()
        for key, original in self.items.items():
            if now.get(key, original) is not original:
                module_name, attr = key
                changed.append(f"{module_name}.{attr} was replaced")
                owner = torch.Tensor if module_name == "torch.Tensor" else (
                    torch.nn.Module if module_name == "torch.nn.Module" else (
                        torch.cuda.Event if module_name == "torch.cuda.Event" else sys.modules[module_name]))
                try:
                    setattr(owner, attr, original)
                except (AttributeError, TypeError):
                    changed.append(f"{module_name}.{attr} could not be restored")
        settings = _global_settings()
        for key, original in self.settings.items():
            if settings[key] != original:
                changed.append(f"{key} changed from {original} to {settings[key]}")
        if settings["torch.backends.cuda.matmul.allow_tf32"] != self.settings["torch.backends.cuda.matmul.allow_tf32"]:
            torch.backends.cuda.matmul.allow_tf32 = self.settings["torch.backends.cuda.matmul.allow_tf32"]
        if settings["torch.backends.cudnn.allow_tf32"] != self.settings["torch.backends.cudnn.allow_tf32"]:
            torch.backends.cudnn.allow_tf32 = self.settings["torch.backends.cudnn.allow_tf32"]
        if settings["torch.get_float32_matmul_precision()"] != self.settings["torch.get_float32_matmul_precision()"]:
            torch.set_float32_matmul_precision(self.settings["torch.get_float32_matmul_precision()"])
        if settings["torch.get_default_dtype()"] != self.settings["torch.get_default_dtype()"]:
            torch.set_default_dtype(self.settings["torch.get_default_dtype()"])
        return changed


def namespace_guard():
    return NamespaceGuard()


# ---- writes outside the scratch folder ----

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.symlink", "os.link", "os.truncate",
                "shutil.rmtree", "shutil.move", "os.chmod", "os.chown", "os.utime"}


_OTHER_PROCESS = re.compile(r"^/proc/(\d+)/(environ|mem|maps|cmdline|fd/|root/|cwd)")


def watch_writes(scratch):
    """Records every attempt, from now on, to write, create or remove a path outside `scratch` and /dev, or to open
    another process's /proc entries (an audit hook cannot be removed again). Landlock refuses such writes and the
    worker's own process namespace hides other processes; this says that one was tried. Returns the list the
    attempted paths are appended to."""
    allowed = (os.path.realpath(scratch) + os.sep, "/dev/")
    attempts = []
    # Importing the candidate would cache its bytecode beside it, outside the scratch folder: not the candidate's
    # doing, and refused by Landlock anyway.
    sys.dont_write_bytecode = True

    def outside(path):
        if isinstance(path, int) or path is None:
            return None
        full = os.path.realpath(os.fsdecode(path))
        return None if (full + os.sep).startswith(allowed) else full

    def hook(event, args):
        if event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            if isinstance(path, (str, bytes)):
                other = _OTHER_PROCESS.match(os.fsdecode(path))
                if other and int(other.group(1)) != os.getpid():
                    attempts.append(os.fsdecode(path))
                    return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and (where := outside(path)):
                attempts.append(where)
        elif event in _PATH_EVENTS and args and (where := outside(args[0])):
            attempts.append(where)

    sys.addaudithook(hook)
    return attempts


# ---- static scan of the candidate's source ----

_TIMER_ROOTS = {"time", "timeit", "torch", "triton", "builtins", "gc", "sys", "os", "numpy", "np", "F",
                "functional", "nn"}
_THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "subprocess", "asyncio"}
_NETWORK_MODULES = {"socket", "ssl", "urllib", "http", "requests", "httpx", "aiohttp", "ftplib", "smtplib", "paramiko"}
_INTROSPECTION = {("gc", "get_objects"), ("gc", "get_referrers"), ("sys", "_getframe"), ("inspect", "stack"),
                  ("inspect", "currentframe"), ("inspect", "getouterframes"), ("ctypes", "memmove"),
                  ("ctypes", "cast"), ("ctypes", "CDLL")}
_PROCESS_CALLS = {("os", "fork"), ("os", "forkpty"), ("os", "system"), ("os", "popen"), ("os", "spawnl"),
                  ("os", "spawnv"), ("os", "execv"), ("os", "execve"), ("os", "execl"), ("os", "posix_spawn"),
                  ("pty", "fork")}
_STREAM_CALLS = {"Stream", "stream", "set_stream", "ExternalStream", "StreamContext"}
_DYNAMIC_CODE = {"exec", "eval", "compile", "__import__"}
_credential_name = None


def set_credential_rule(rule):
    """The worker passes rnx's one rule for names that mark a credential (rnx::credential_name, the rule the
    environment filter withholds by), so the scan calls secret exactly the variables a kernel never gets."""
    global _credential_name
    _credential_name = rule
_NATIVE_PATTERNS = [
    (re.compile(r"\bcudaStreamCreate\w*|\bcudaStreamBeginCapture\b|\bat::cuda::getStreamFromPool\b"), "streams",
     "creates a CUDA stream in native code (work on another stream escapes the timer)"),
    (re.compile(r"\bstd::thread\b|\bpthread_create\b|\bstd::async\b|#\s*pragma\s+omp\s+task"), "threads",
     "starts threads in native code (work off the timed thread)"),
    (re.compile(r"\bfork\s*\(|\bexecv\w*\s*\(|\bsystem\s*\(|\bpopen\s*\("), "processes",
     "starts a process from native code"),
    (re.compile(r"\bsocket\s*\(|\bconnect\s*\(|\bgetaddrinfo\s*\("), "network", "opens a network connection"),
    (re.compile(r"\bgetenv\s*\("), "secrets", "reads environment variables"),
    (re.compile(r"\bcudaEventElapsedTime\b|\bclock_gettime\b|\bgettimeofday\b"), "timer",
     "touches the clocks the timer uses"),
]


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, reference_stem, reference_names, kernelbench, reference_file):
        self.findings = []
        self.reference_file = reference_file
        self.reference_stem = reference_stem
        self.reference_names = reference_names
        self.kernelbench = kernelbench
        self.aliases = {}  # local name -> imported module path
        self.class_stack = []

    def add(self, node, category, message):
        self.findings.append({"line": getattr(node, "lineno", 0), "category": category, "message": message})

    def _module_of(self, name):
        return self.aliases.get(name, name)

    def visit_Import(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            self._check_import(node, a.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{mod}.{a.name}" if mod else a.name
        self._check_import(node, mod)
        if mod.split(".")[-1] == self.reference_stem or (node.level and mod == self.reference_stem):
            self.add(node, "reference_fallback", f"imports the reference module '{mod}'")
        self.generic_visit(node)

    def _check_import(self, node, name):
        root = name.split(".")[0]
        if root in _THREAD_MODULES:
            self.add(node, "threads", f"imports {name} (threads or processes run work the timer does not see)")
        if root in _NETWORK_MODULES:
            self.add(node, "network", f"imports {name} (a kernel has no business on the network)")
        if root == self.reference_stem:
            self.add(node, "reference_fallback", f"imports the reference module '{name}'")
        if root in ("importlib", "runpy"):
            self.add(node, "dynamic_code", f"imports {name} (code loaded at run time escapes this scan)")

    def visit_ClassDef(self, node):
        self.class_stack.append(node.name)
        self.generic_visit(node)
        self.class_stack.pop()

    def _check_target(self, target, node):
        dotted = _dotted(target)
        if dotted and "." in dotted:
            root = dotted.split(".")[0]
            full = self._module_of(root) + dotted[len(root):]
            full_root = full.split(".")[0]
            if full_root in _TIMER_ROOTS or root in _TIMER_ROOTS:
                category = "timer" if any(w in full for w in ("time", "Event", "synchronize", "perf_counter",
                                                               "elapsed")) else "monkey_patch"
                if full.startswith("torch.backends") or "allow_tf32" in full:
                    category = "global_state"
                self.add(node, category, f"assigns {full} (patching a library changes what the timer or the "
                                         f"reference sees)")

    def visit_Assign(self, node):
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        dotted = _dotted(node.value)
        if dotted and self._module_of(dotted.split(".")[0]) + dotted[len(dotted.split(".")[0]):] == "os.environ":
            key = node.slice.value if isinstance(node.slice, ast.Constant) else None
            self._environment(node, key)
        self.generic_visit(node)

    def _environment(self, node, key):
        if isinstance(key, str):
            secret = " (a secret)" if _credential_name is not None and _credential_name(key) else ""
            self.add(node, "secrets", f"reads environment variable {key}{secret}")
        else:
            self.add(node, "secrets", "reads the environment")

    def visit_Call(self, node):
        dotted = _dotted(node.func)
        if dotted:
            root = dotted.split(".")[0]
            full = self._module_of(root) + dotted[len(root):]
            parts = full.split(".")
            last = parts[-1]
            if full in ("setattr", "builtins.setattr") and node.args:
                target = _dotted(node.args[0])
                if target and self._module_of(target.split(".")[0]).split(".")[0] in _TIMER_ROOTS | {"torch"}:
                    self.add(node, "monkey_patch", f"calls setattr on {target}")
            if full in _DYNAMIC_CODE:
                self.add(node, "dynamic_code", f"calls {full}() (code built at run time escapes this scan)")
            if len(parts) >= 2 and (parts[0], last) in _INTROSPECTION:
                self.add(node, "introspection", f"calls {full}() (reaching into the verifier's or reference's objects)")
            if len(parts) >= 2 and (parts[0], last) in _PROCESS_CALLS:
                self.add(node, "processes", f"calls {full}() (starts a process)")
            if parts[0] == "torch" and "cuda" in parts and last in _STREAM_CALLS:
                self.add(node, "streams", f"calls {full}() (work on another stream escapes the timer)")
            if full in ("os.getenv", "os.environ.get", "os.getenvb") or (full.startswith("os.environ.") and
                                                                       last in ("get", "items", "copy", "keys")):
                key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                self._environment(node, key)
            if full in ("torch.set_float32_matmul_precision", "torch.set_default_dtype",
                        "torch.backends.cudnn.allow_tf32", "torch.use_deterministic_algorithms"):
                self.add(node, "global_state", f"calls {full}() (changes global numerics for everyone after it)")
            if last in self.reference_names and self.kernelbench and root in self.reference_names:
                self.add(node, "reference_fallback", f"calls the reference's {dotted}")
            if (self.kernelbench and self.class_stack and isinstance(node.func, ast.Attribute) and
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "Model"):
                self.add(node, "reference_fallback", f"calls the reference class's Model.{node.func.attr}()")
            if self.kernelbench and self.class_stack and dotted == "Model":
                self.add(node, "reference_fallback", "builds the reference Model inside the candidate")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and self.reference_file and self.reference_file in node.value:
            self.add(node, "reference_fallback", f"names the reference file {self.reference_file} (loading it at run time)")
        if isinstance(node.value, str) and len(node.value) > 40 and ("__global__" in node.value or
                                                                   "#include" in node.value or
                                                                   "torch::" in node.value):
            for pattern, category, message in _NATIVE_PATTERNS:
                if pattern.search(node.value):
                    self.add(node, category, "inline native source " + message)
        self.generic_visit(node)


def static_scan(path, reference_path, reference_is_kernelbench):
    """Findings as dicts {line, category, message}. Python files are parsed (never run); .cpp/.cu files are
    searched for the native patterns."""
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        source = f.read()
    reference_stem = os.path.splitext(os.path.basename(reference_path))[0] if reference_path else ""
    if not path.endswith(".py"):
        findings = []
        for number, line in enumerate(source.splitlines(), 1):
            for pattern, category, message in _NATIVE_PATTERNS:
                if pattern.search(line):
                    findings.append({"line": number, "category": category, "message": message})
        return findings
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return [{"line": e.lineno or 0, "category": "syntax", "message": f"does not parse: {e.msg}"}]
    reference_names = set()
    if reference_path and reference_path.endswith(".py") and os.path.abspath(reference_path) != os.path.abspath(path):
        with open(reference_path, "r", encoding="utf-8", errors="replace") as f:
            try:
                ref_tree = ast.parse(f.read())
                reference_names = {n.name for n in ref_tree.body
                                   if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == "Model"}
            except SyntaxError:
                pass
    scanner = _Scanner(reference_stem, reference_names, reference_is_kernelbench,
                       os.path.basename(reference_path) if reference_path else "")
    scanner.visit(tree)
    return scanner.findings
