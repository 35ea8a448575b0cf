"""The env_id rnx computes from a run's environment (rnx::compute_env_id, common/src/run_document.cpp).

rnx-server refuses a run whose environment.env_id is anything else (422), so every test and bench script that
writes run documents by hand fills env_id with this one function:

    env = {"device": "cpu", "cpu": "test cpu", "threads": 2}
    env["env_id"] = env_id_of(env)
"""
import hashlib

# The fields in the order rnx hashes them, each "" when absent; then image, "none" when absent (as rnx reads it).
HASHED_FIELDS = ("device", "compute_capability", "driver", "cuda", "torch", "python", "cpu", "os")


def env_id_of(env):
    """16 hex digits: sha256 of the fields joined by 0x1f, then threads, then the harness when there is one."""
    fields = [str(env.get(k, "")) for k in HASHED_FIELDS] + [str(env.get("image", "none"))]
    canonical = "".join(f + "\x1f" for f in fields) + str(env.get("threads", 0))
    if env.get("harness"):
        canonical += "\x1f" + env["harness"]
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def with_env_id(env):
    """`env` (a dict, changed in place and returned) with its env_id computed."""
    env["env_id"] = env_id_of(env)
    return env
