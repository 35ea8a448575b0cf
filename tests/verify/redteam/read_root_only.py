# rnx-verify-case: kernel=softmax expect=reject check=smoke detail=rnx-nothing-read absent=rnx-read: setup=secret_file
# Untrusted code, point 1 of issue 35: reads what its user may not, or what lies outside its job: /etc/shadow, a
# mode-600 file the test made outside scratch (RNX_VERIFY_REDTEAM_PATH, a stand-in for a key under ~/.ssh), the
# repository's .git (the file or folder and its config), and /proc/1/cmdline (the command line of whatever is PID 1
# where it runs). It raises an exception carrying what it read, as a candidate publishing secrets through the report
# would. The report must carry "rnx-nothing-read" (every read refused) and never "rnx-read:" (some text read).
import os

import torch


def _repository_files():
    """The .git of the repository holding this file, and its config (a worktree's .git file names its gitdir)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    while folder != os.path.dirname(folder):
        dot_git = os.path.join(folder, ".git")
        if os.path.lexists(dot_git):
            out = [dot_git if os.path.isfile(dot_git) else os.path.join(dot_git, "config")]
            try:
                with open(dot_git) as f:
                    gitdir = f.read().split("gitdir:", 1)[1].strip()
                out.append(os.path.join(gitdir, os.pardir, os.pardir, "config"))
            except (OSError, IndexError):
                pass
            return out
        folder = os.path.dirname(folder)
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir, ".git")]


def _read_all():
    targets = ["/etc/shadow", os.environ.get("RNX_VERIFY_REDTEAM_PATH", "/nonexistent"), "/proc/1/cmdline"]
    targets += _repository_files()
    read, refused = [], []
    for path in targets:
        try:
            with open(path, "rb") as f:
                text = f.read(200).replace(b"\0", b" ").strip()
        except OSError as e:
            refused.append(f"{path} ({e.strerror})")
            continue
        if text:
            read.append(f"rnx-read:{path}:{text[:80]!r}")
        else:
            refused.append(f"{path} (empty)")
    return read, refused


AT_IMPORT = _read_all()


def run(x):
    read, refused = _read_all()
    read += AT_IMPORT[0]
    if read:
        raise RuntimeError("; ".join(read))
    raise RuntimeError("rnx-nothing-read: " + "; ".join(refused))
