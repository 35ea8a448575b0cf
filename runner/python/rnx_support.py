# The Python half of the runner, embedded into the worker: loads .py kernels and wraps them per runtime.
#
# The C++ side makes the inputs, times the calls and checks the outputs; this module only does what needs
# Python objects: importing a file, finding the entry, torch.compile / torch.jit.trace / ONNX export.
import functools
import importlib.util
import inspect
import os
import shutil
import sys
import tempfile

import torch


class Unavailable(Exception):
    """A runtime that cannot run here; the configuration becomes `skipped` with this reason."""


class KernelError(Exception):
    """A problem with the user's kernel file; the configuration becomes `error` with this message."""


# The dtype names of manifests and verify's cases; the one table (rnx_verify uses it too).
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


# The two forms of a Python kernel file (Loaded.kind; the C++ side reads them as runner::kernel_form).
FUNCTION = "function"
KERNELBENCH = "kernelbench"


class Loaded:
    def __init__(self, module, path, kind, entry_name, fn=None, model_cls=None, ref_cls=None, local_modules=()):
        self.module = module
        # Modules the kernel imported from its own folder: two revisions loaded into one process would share them.
        self.local_modules = list(local_modules)
        self.path = path
        self.kind = kind  # FUNCTION | KERNELBENCH
        self.entry_name = entry_name
        self.fn = fn
        self.model_cls = model_cls
        self.ref_cls = ref_cls


class EntryError(KernelError):
    """The entry a file was asked for is missing or not callable; each tool words the fix its own way."""

    def __init__(self, name, defined, found_type=None):
        super().__init__(f"entry '{name}' not found" if found_type is None else f"entry '{name}' is a {found_type}")
        self.name = name
        self.defined = defined  # the file's own public functions and classes, for the hint
        self.found_type = found_type  # set when the entry exists but cannot be called


def _local_modules(names, folder):
    local = []
    for name in sorted(names):
        origin = getattr(sys.modules.get(name), "__file__", None)
        if origin and os.path.abspath(origin).startswith(folder + os.sep):
            local.append(name)
    return local


def import_file(path, module_name, folder_first=True):
    """Imports `path` as `module_name` with its folder on sys.path: first (a kernel's helpers beside it are found
    before anything else) or, with folder_first=False, last (a candidate cannot shadow what the reference imports).
    Returns the module and the modules it imported from its own folder. A SyntaxError propagates as such."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        if folder_first:
            sys.path.insert(0, folder)
        else:
            sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise KernelError("cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    before = set(sys.modules)
    spec.loader.exec_module(module)
    return module, _local_modules(set(sys.modules) - before, folder)


def is_model_class(value):
    return isinstance(value, type) and issubclass(value, torch.nn.Module)


def find_entry(module, module_name, entry, prefer_new):
    """The one rule of what a Python kernel file holds, for `rnx bench` and `rnx verify` alike. The entry is the
    name asked for; by default KernelBench's ModelNew (where prefer_new: the rewritten model), else its Model,
    else `run`. An nn.Module class is a KernelBench model, anything else callable a function.
    Returns (kind, name, target); raises EntryError."""
    name = entry
    if not name:
        if prefer_new and is_model_class(getattr(module, "ModelNew", None)):
            name = "ModelNew"
        elif is_model_class(getattr(module, "Model", None)):
            name = "Model"
        else:
            name = "run"
    target = getattr(module, name, None)
    if target is None:
        defined = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_") and
                         getattr(v, "__module__", None) == module_name)
        raise EntryError(name, defined)
    if is_model_class(target):
        return KERNELBENCH, name, target
    if not callable(target):
        raise EntryError(name, [], type(target).__name__)
    return FUNCTION, name, target


def load(path, entry, module_name):
    """Imports `path` and finds its entry (find_entry, preferring ModelNew): a function, or a KernelBench model
    with get_inputs() and get_init_inputs(), whose float64 reference is the file's Model where it has one."""
    module, local = import_file(path, module_name)
    try:
        kind, name, target = find_entry(module, module_name, entry, prefer_new=True)
    except EntryError as e:
        if e.found_type is not None:
            raise KernelError(f"entry '{e.name}' is a {e.found_type}, not a function") from None
        hint = ("functions defined there: " + ", ".join(e.defined)) if e.defined else "it defines no functions"
        raise KernelError(f"entry '{e.name}' not found ({hint}); set entry = \"NAME\" for this kernel in rnx.toml") \
            from None
    if kind == FUNCTION:
        return Loaded(module, path, FUNCTION, name, fn=target, local_modules=local)
    if not callable(getattr(module, "get_inputs", None)) or not callable(getattr(module, "get_init_inputs", None)):
        raise KernelError(f"a KernelBench file needs get_inputs() and get_init_inputs() beside its {name} class "
                          f"(or set entry = \"NAME\" to a function for this kernel in rnx.toml)")
    reference_cls = module.Model if is_model_class(getattr(module, "Model", None)) else target
    return Loaded(module, path, KERNELBENCH, name, model_cls=target, ref_cls=reference_cls, local_modules=local)


def input_order(loaded, names):
    """The declared inputs bound to the entry's parameters by name: returns (order, None), where order[i] is the
    index in `names` of the input the entry's i-th positional parameter takes (None: the declared order, for entries
    with no parameter names to bind by: KernelBench files, builtins without a signature, *args), or (None, message)
    naming both lists when an input is not a parameter or a required parameter has no input."""
    if loaded.kind != FUNCTION:
        return None, None
    try:
        sig = inspect.signature(loaded.fn)
    except (TypeError, ValueError):
        return None, None  # builtins without a signature: let the call decide
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
    declared = list(names)
    param_names = [p.name for p in positional]
    header = f"entry '{loaded.entry_name}{sig}'"
    if variadic and not any(n in param_names for n in declared):
        return None, None  # run(*xs): the declared order is all there is
    unknown = [n for n in declared if n not in param_names]
    if unknown:
        return None, (f"input(s) {', '.join(unknown)} of the manifest are not parameters of {header} (parameters: "
                      f"{', '.join(param_names) or 'none'}; inputs: {', '.join(declared) or 'none'}); inputs are "
                      f"bound by name: name each input after the parameter it is for")
    missing = [p.name for p in positional if p.default is p.empty and p.name not in declared]
    if missing:
        return None, (f"parameter(s) {', '.join(missing)} of {header} have no input in the manifest (inputs: "
                      f"{', '.join(declared) or 'none'}); add them to the kernel's inputs table")
    taken = [p.name for p in positional if p.name in declared]
    # A parameter left to its default before one that is given cannot be skipped positionally.
    for i, p in enumerate(positional[:len(taken)]):
        if p.name not in declared:
            later = [q.name for q in positional[i + 1:] if q.name in declared]
            return None, (f"parameter {p.name} of {header} has no input but later ones do ({', '.join(later)}); "
                          f"declare an input for it too")
    return [declared.index(n) for n in taken], None


# ---- KernelBench files: the one way rnx bench and rnx verify size them, draw their inputs and build models ----

def set_sizes(modules, batch, sizes=None):
    """Sets batch_size (where batch > 0) and each named size of `sizes` in every module that defines it (None
    entries skipped): what get_inputs() and get_init_inputs() then read."""
    for m in modules:
        if m is None:
            continue
        if batch > 0 and hasattr(m, "batch_size"):
            m.batch_size = batch
        for name, value in (sizes or {}).items():
            if not name.isdigit() and hasattr(m, name):
                setattr(m, name, value)


def get_inputs(module, path, seed, device):
    """module.get_inputs() under `seed`, its tensors made on `device` (torch.device as the default device: a CUDA
    configuration's inputs are drawn by the GPU, not by one CPU thread and then copied; a literal device= in the
    file still wins). Raises KernelError unless it returns a list or tuple."""
    torch.manual_seed(seed)
    with torch.device(device):
        inputs = module.get_inputs()
    if not isinstance(inputs, (list, tuple)):
        raise KernelError(f"{path}: get_inputs() returned {type(inputs).__name__}, expected a list of tensors")
    return list(inputs)


def get_init_inputs(module, seed, device):
    """module.get_init_inputs() under `seed`, anything it makes made on `device`."""
    torch.manual_seed(seed)
    with torch.device(device):
        return list(module.get_init_inputs())


def build_model(cls, init, dtype, device, seed):
    """cls(*init) under `seed` (the same seed gives the reference and the candidate the same weights), its
    weights initialised on `device`, then cast to `dtype`, in eval mode."""
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init)
    return model.to(device=device, dtype=dtype).eval()


def kernelbench_inputs(loaded, batch, seed, device):
    """The inputs of a configuration: get_inputs() with the module's batch_size set to the configured batch."""
    set_sizes([loaded.module], batch)
    return get_inputs(loaded.module, loaded.path, seed, device)


def _model(loaded, cls, dtype, device, seed):
    return build_model(cls, get_init_inputs(loaded.module, seed, device), dtype, device, seed)


def _callable(loaded, dtype, device, seed):
    if loaded.kind == FUNCTION:
        return loaded.fn
    return _model(loaded, loaded.model_cls, DTYPES[dtype], device, seed)


def reference(loaded, device, seed):
    """The float64 eager form: the function itself, or KernelBench's Model (never ModelNew) in float64."""
    if loaded.kind == FUNCTION:
        return loaded.fn
    return _model(loaded, loaded.ref_cls, torch.float64, device, seed)


def tensors_of(out):
    """A kernel's result as a flat list of tensors (nested tuples and lists flattened), for bench and verify alike."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        result = []
        for item in out:
            result.extend(tensors_of(item))
        return result
    raise KernelError(f"the kernel returned {type(out).__name__}; return a tensor or a tuple/list of tensors")


class _AsModule(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _have_compiler():
    return shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++") or shutil.which("clang++")


def prepare(loaded, runtime, inputs, dtype, device, seed):
    """Returns (call, convert): a zero-argument callable that runs the kernel once on the bound inputs, and a
    function turning its result into a list of tensors. Raises Unavailable when the runtime cannot run here."""
    target = _callable(loaded, dtype, device, seed)
    inputs = tuple(inputs)
    if runtime == "eager":
        return functools.partial(target, *inputs), tensors_of
    if runtime == "compile":
        if device.startswith("cpu") and not _have_compiler():
            raise Unavailable("torch.compile on CPU needs a C++ compiler (g++ or clang++) and none is on PATH")
        compiled = torch.compile(target)
        return functools.partial(compiled, *inputs), tensors_of
    if runtime == "torchscript":
        module = target if isinstance(target, torch.nn.Module) else _AsModule(target)
        with torch.no_grad():
            traced = torch.jit.trace(module, inputs, check_trace=False)
        traced = torch.jit.freeze(traced.eval()) if isinstance(target, torch.nn.Module) else traced
        return functools.partial(traced, *inputs), tensors_of
    if runtime == "onnxruntime":
        return _prepare_onnxruntime(target, inputs, dtype, device)
    if runtime == "tensorrt":
        try:
            import torch_tensorrt  # noqa: F401
        except ImportError:
            raise Unavailable("tensorrt: the torch_tensorrt package is not installed") from None
        if not device.startswith("cuda"):
            raise Unavailable("tensorrt runs on CUDA devices only")
        compiled = torch.compile(target, backend="tensorrt")
        return functools.partial(compiled, *inputs), tensors_of
    raise Unavailable(f"unknown runtime '{runtime}'")


def _prepare_onnxruntime(target, inputs, dtype, device):
    try:
        import onnxruntime as ort
    except ImportError:
        raise Unavailable("onnxruntime is not installed (pip install onnxruntime)") from None
    if dtype == "bfloat16":
        raise Unavailable("onnxruntime: numpy has no bfloat16, so bfloat16 inputs cannot be fed")
    providers = ["CPUExecutionProvider"]
    if device.startswith("cuda"):
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise Unavailable("onnxruntime here has no CUDAExecutionProvider (install onnxruntime-gpu)")
        providers = ["CUDAExecutionProvider"]
    module = target if isinstance(target, torch.nn.Module) else _AsModule(target)
    names = [f"input_{i}" for i in range(len(inputs))]
    with tempfile.TemporaryDirectory(prefix="rnx-onnx-") as folder:
        path = os.path.join(folder, "kernel.onnx")
        with torch.no_grad():
            torch.onnx.export(module, inputs, path, input_names=names, dynamo=False)
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(path, options, providers=providers)
    outputs = [o.name for o in session.get_outputs()]

    def bind(values):
        if not device.startswith("cpu"):
            raise Unavailable("onnxruntime on CUDA is fed host copies of the inputs, which redrawn values would not "
                              "reach; time it without fresh inputs")
        # On the CPU numpy shares the tensors' memory, so values redrawn in place reach the session.
        run = functools.partial(session.run, outputs, {n: t.detach().numpy() for n, t in zip(names, values)})
        run.rnx_rebind = bind
        return run

    feeds = {n: t.detach().cpu().numpy() for n, t in zip(names, inputs)}
    run = functools.partial(session.run, outputs, feeds)
    run.rnx_rebind = bind

    def convert(result):
        return [torch.from_numpy(a).to(device) for a in result]

    return run, convert


def rebind(call, inputs):
    """The prepared call `call` on other inputs of the same shapes (the pool of fresh inputs): the same target (the
    function, the module with its weights, its compiled or traced form), other arguments."""
    bind = getattr(call, "rnx_rebind", None)
    if bind is not None:
        return bind(tuple(inputs))
    if not isinstance(call, functools.partial) or call.keywords:
        raise Unavailable("this runtime's prepared call cannot be given other inputs; time it without fresh inputs")
    return functools.partial(call.func, *inputs)


def state_tensors(call):
    """The parameters and buffers of the nn.Module behind a prepared eager or torch.compile call (what the kernel
    owns besides its inputs), or [] where there is none or where two of them share memory (tied weights, which
    moving one at a time would untie)."""
    target = getattr(call, "func", None)
    target = getattr(target, "_orig_mod", target)  # torch.compile wraps the module
    if not isinstance(target, torch.nn.Module) or isinstance(target, torch.jit.ScriptModule):
        return []
    tensors = list(target.parameters()) + list(target.buffers())
    storages = [t.untyped_storage().data_ptr() for t in tensors]
    return tensors if len(set(storages)) == len(storages) else []


def _flop_formulas():
    """What rnx adds to the FLOP counter's table: the counter's own attention formula (two products, 4*B*H*L*S*E)
    for the CPU kernel of scaled_dot_product_attention, which the table lacks (torch 2.11 counts its CUDA kernels
    only)."""
    from torch.utils.flop_counter import sdpa_flop_count

    def cpu_attention_flops(query, key, value, *args, out_shape=None, **kwargs):
        return sdpa_flop_count(query, key, value)

    cpu_attention = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    return {cpu_attention: cpu_attention_flops} if cpu_attention is not None else {}


def _span(t):
    """The bytes of t's storage that t covers, from its first element to one past its last, as (start, end)."""
    if t.numel() == 0:
        return 0, 0
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    start = t.storage_offset() * t.element_size()
    return start, start + (last + 1) * t.element_size()


def distinct_bytes(tensors):
    """The bytes of `tensors` with each distinct storage counted once: per storage, the union of what its tensors
    cover (a weight passed twice, an output that is an input changed in place or a view of it, count once)."""
    spans = {}
    for t in tensors:
        spans.setdefault((t.device, t.untyped_storage().data_ptr()), []).append(_span(t))
    total = 0
    for covered in spans.values():
        end = 0
        for start, stop in sorted(covered):
            total += max(0, stop - max(start, end))
            end = max(end, stop)
    return total


# Elementwise functions whose arithmetic is more than a few instructions an element (a series or a table per value):
# the FLOP counter counts none of them, and no peak rnx measures is theirs.
TRANSCENDENTAL = frozenset((
    "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "tanh", "sigmoid", "gelu",
    "silu", "mish", "softplus", "elu", "selu", "celu", "logit", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "sqrt", "rsqrt", "lgamma", "digamma"))


def _elementwise_mode():
    """A dispatch mode that counts the output elements of every TRANSCENDENTAL call it sees."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Elementwise(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.overloadpacket.__name__.rstrip("_") in TRANSCENDENTAL:
                Elementwise.count += out.numel() if isinstance(out, torch.Tensor) else 0
            return out

    return Elementwise()


def count_work(loaded, inputs, dtype, device, seed):
    """The work of one call of the eager reference in `dtype` (a KernelBench file's Model, never its ModelNew: a
    rewrite does the reference's work): (FLOPs as torch's FLOP counter counts them, the distinct bytes of the
    inputs, the module's parameters and buffers, and the outputs, the elements of transcendental elementwise
    functions it evaluates (TRANSCENDENTAL))."""
    # Imported here: a torch without the counter fails this count (the result says why), not every kernel's load.
    from torch.utils.flop_counter import FlopCounterMode

    target = loaded.fn if loaded.kind == FUNCTION else _model(loaded, loaded.ref_cls, DTYPES[dtype], device, seed)
    elementwise = _elementwise_mode()
    with FlopCounterMode(display=False, custom_mapping=_flop_formulas()) as counter, elementwise:
        outputs = tensors_of(target(*inputs))
    weights = list(target.parameters()) + list(target.buffers()) if isinstance(target, torch.nn.Module) else []
    return counter.get_total_flops(), distinct_bytes(list(inputs) + weights + outputs), type(elementwise).count


def preload_compilers():
    """What a worker started ahead of its turn imports while it waits, hidden behind the measurement in progress:
    the Python front ends of torch.compile and Triton. A kernel file, or a library it imports (one that wraps its
    functions in torch.compiler.disable or defines triton.jit kernels at import), would otherwise import them on
    its configuration's clock, in every worker. The worker of a check round needs both whatever its kernels are:
    torch's FLOP counter (count_work) imports them. Importing only what earlier workers' kernels imported cannot
    be told apart from that, so every waiting worker imports both. CPU work only, no device touched; one not
    installed is left out. Returns the names imported."""
    done = []
    for name in ("torch._dynamo", "triton"):
        try:
            importlib.import_module(name)
            done.append(name)
        except Exception:  # noqa: BLE001 - absent or broken: the kernel that needs it will say so itself
            pass
    return done


def versions():
    return {"torch": torch.__version__.split("+")[0], "torch_full": torch.__version__,
            "python": ".".join(str(v) for v in sys.version_info[:3]),
            "cuda": torch.version.cuda or ""}
