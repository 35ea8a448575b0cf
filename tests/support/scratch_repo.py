"""Throw-away git repositories for the end-to-end tests: files written, committed, their commits named.

    from scratch_repo import git, check, init_repo, commit_files
"""
import os
import subprocess


def git(repo, *args):
    """git -C REPO ARGS with a fixed author; returns stdout, stripped; a failure raises CalledProcessError."""
    return subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def check(condition, message, problems):
    """Collects a failed check's message, so one run reports every problem at once."""
    if not condition:
        problems.append(message)


def commit_files(repo, files, subject, append=False):
    """Writes files ({relative path: text}; appends with append=True), commits them, returns the commit."""
    for path, text in files.items():
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "a" if append else "w") as f:
            f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", subject)
    return git(repo, "rev-parse", "HEAD")


def init_repo(repo, files, subject):
    """A new repository at REPO (branch main) whose first commit holds files; returns that commit."""
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    return commit_files(repo, files, subject)
