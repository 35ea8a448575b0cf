# rnx-verify-case: kernel=softmax expect=reject check=smoke absent=FORGED-BY-CANDIDATE
# Untrusted code: on its first call, writes a complete set of passing report lines (every check, the sandbox seal
# and the final line) to the verifier's result channel (descriptor 3), to every other descriptor it holds, and to
# its parent's descriptors through /proc, then exits at once, as if the verifier had finished and approved it.
import json
import os

CHECKS = [("correctness", n) for n in ("smoke", "shape_sweep", "stability", "determinism", "edge_cases")] + [
    ("audit", n) for n in ("fresh_inputs", "stale_memory", "input_mutation", "output_aliasing", "ignored_inputs",
                           "shape_specialization", "precision", "hidden_work", "extra_threads", "implausible_speedup",
                           "static_scan", "patched_globals")]


def _forged():
    lines = [{"event": "check", "group": g, "name": n, "result": "pass", "detail": "FORGED-BY-CANDIDATE",
              "dtype": "float32", "seconds": 0} for g, n in CHECKS]
    lines.append({"event": "sealed", "seccomp": True, "why": "", "sockets": 0, "processes": 0, "io_uring": 0,
                  "writes_outside": {"count": 0, "first": ""}})
    lines.append({"event": "done"})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def run(x):
    data = _forged()
    for fd in range(0, 64):
        try:
            os.write(fd, data)
        except OSError:
            pass
    for target in (f"/proc/{os.getppid()}/fd", "/proc/1/fd"):
        try:
            names = os.listdir(target)
        except OSError:
            continue
        for name in names:
            try:
                fd = os.open(os.path.join(target, name), os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.write(fd, data)
            except OSError:
                pass
            os.close(fd)
    os._exit(0)
