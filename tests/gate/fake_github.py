#!/usr/bin/env python3
"""A local stand-in for the GitHub REST API endpoints `rnx gate` calls; it records every request.

It speaks GitHub's request and response formats for: issue comments (list with Link pagination,
create, update), commit statuses, collaborator permission, pull requests and comment reactions. It
checks what GitHub checks (Bearer token, JSON bodies, status states, the 140-character description)
and answers GitHub's error shapes ({"message", "documentation_url"}).

Runs on 127.0.0.1 only, on a free port it writes to --port-file, and stops by itself after
--max-seconds or --max-requests. State (comments, statuses, permissions, pull requests) lives in
memory for the server's life; every request is appended as one JSON line to --log.
"""
import argparse
import os
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

DOCS = "https://docs.github.com/rest"
STATUS_STATES = {"error", "failure", "pending", "success"}
REACTIONS = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class State:
    def __init__(self, setup, repo, base_url):
        self.lock = threading.Lock()
        self.repo = repo
        self.base_url = base_url
        self.token = setup.get("token", "")
        self.bot = setup.get("bot", "github-actions[bot]")
        self.permissions = setup.get("permissions", {})
        self.pulls = {int(k): v for k, v in setup.get("pulls", {}).items()}
        self.next_id = 1000
        self.comments = []  # {id, issue, body, user, created_at, updated_at}
        for c in setup.get("comments", []):
            self.add_comment(int(c["issue"]), c["body"], c.get("user", "someone"), c.get("id"))
        self.statuses = []
        self.reactions = []
        self.issues = []  # {number, title, body, user, state, created_at}

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def add_comment(self, issue, body, user, comment_id=None):
        c = {"id": comment_id or self.new_id(), "issue": issue, "body": body, "user": user,
             "created_at": now(), "updated_at": now()}
        self.comments.append(c)
        return c

    def comment_json(self, c):
        owner_repo = self.repo
        return {
            "id": c["id"],
            "node_id": "IC_%d" % c["id"],
            "url": "%s/repos/%s/issues/comments/%d" % (self.base_url, owner_repo, c["id"]),
            "html_url": "https://github.com/%s/pull/%d#issuecomment-%d" % (owner_repo, c["issue"], c["id"]),
            "issue_url": "%s/repos/%s/issues/%d" % (self.base_url, owner_repo, c["issue"]),
            "body": c["body"],
            "user": {"login": c["user"], "id": abs(hash(c["user"])) % 100000,
                     "type": "Bot" if c["user"].endswith("[bot]") else "User"},
            "created_at": c["created_at"],
            "updated_at": c["updated_at"],
            "author_association": "NONE",
        }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-github/1"

    def log_message(self, fmt, *args):
        pass  # the JSON-lines log is the record

    # --- plumbing -------------------------------------------------------------------------------
    def record(self, body_text, status):
        entry = {
            "method": self.command,
            "path": urlsplit(self.path).path,
            "query": parse_qs(urlsplit(self.path).query),
            "headers": {k.lower(): v for k, v in self.headers.items()
                        if k.lower() in ("accept", "authorization", "content-type", "user-agent",
                                         "x-github-api-version")},
            "body": None,
            "status": status,
        }
        if body_text:
            try:
                entry["body"] = json.loads(body_text)
            except ValueError:
                entry["body"] = body_text
        with self.server.log_lock:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        self.server.count += 1

    def send_json(self, status, payload, headers=None):
        # Recorded before the answer goes out: a client that exits on the answer finds its request logged.
        self.record(self.body_text, status)
        self.recorded = True
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        return status

    def error(self, status, message, errors=None):
        payload = {"message": message, "documentation_url": DOCS}
        if errors:
            payload["errors"] = errors
        return self.send_json(status, payload)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode("utf-8") if length else ""

    def handle_any(self):
        body_text = self.read_body()
        self.body_text = body_text
        self.recorded = False
        try:
            self.route(body_text)
        finally:
            if not self.recorded:
                self.record(body_text, 500)
            if self.server.count >= self.server.max_requests:
                threading.Thread(target=self.server.shutdown, daemon=True).start()

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = handle_any

    # --- the API --------------------------------------------------------------------------------
    def route(self, body_text):
        st = self.server.state
        if not self.headers.get("User-Agent"):
            return self.error(403, "Request forbidden by administrative rules. Please make sure your request "
                                   "has a User-Agent header")
        auth = self.headers.get("Authorization", "")
        if st.token and auth not in ("Bearer " + st.token, "token " + st.token):
            return self.error(401, "Bad credentials")
        body = None
        if body_text:
            try:
                body = json.loads(body_text)
            except ValueError:
                return self.error(400, "Problems parsing JSON")
        path = urlsplit(self.path).path
        query = parse_qs(urlsplit(self.path).query)
        prefix = "/repos/" + st.repo
        if not path.startswith(prefix + "/"):
            return self.error(404, "Not Found")
        rest = path[len(prefix):]
        m = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if m and self.command == "GET":
            return self.list_comments(int(m.group(1)), query)
        if m and self.command == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return self.error(422, "Invalid request.\n\n\"body\" wasn't supplied.")
            with st.lock:
                c = st.add_comment(int(m.group(1)), body["body"], st.bot)
                return self.send_json(201, st.comment_json(c), {"Location": st.comment_json(c)["url"]})
        if rest == "/issues" and self.command == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("title"), str) or not body["title"]:
                return self.error(422, "Validation Failed",
                                  [{"resource": "Issue", "code": "missing_field", "field": "title"}])
            with st.lock:
                issue = {"number": st.new_id(), "title": body["title"], "body": body.get("body") or "",
                         "user": {"login": st.bot}, "state": "open", "created_at": now()}
                st.issues.append(issue)
            url = "%s/repos/%s/issues/%d" % (st.base_url, st.repo, issue["number"])
            return self.send_json(201, dict(issue, url=url), {"Location": url})
        m = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if m and self.command == "PATCH":
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return self.error(422, "Invalid request.\n\n\"body\" wasn't supplied.")
            with st.lock:
                for c in st.comments:
                    if c["id"] == int(m.group(1)):
                        c["body"] = body["body"]
                        c["updated_at"] = now()
                        return self.send_json(200, st.comment_json(c))
            return self.error(404, "Not Found")
        m = re.fullmatch(r"/issues/comments/(\d+)/reactions", rest)
        if m and self.command == "POST":
            content = body.get("content") if isinstance(body, dict) else None
            if content not in REACTIONS:
                return self.error(422, "Validation Failed",
                                  [{"resource": "Reaction", "code": "invalid", "field": "content"}])
            with st.lock:
                if not any(c["id"] == int(m.group(1)) for c in st.comments):
                    return self.error(404, "Not Found")
                r = {"id": st.new_id(), "comment_id": int(m.group(1)), "content": content,
                     "user": {"login": st.bot}, "created_at": now()}
                st.reactions.append(r)
            return self.send_json(201, {k: v for k, v in r.items() if k != "comment_id"})
        m = re.fullmatch(r"/statuses/([0-9a-f]{7,40})", rest)
        if m and self.command == "POST":
            if not isinstance(body, dict) or body.get("state") not in STATUS_STATES:
                return self.error(422, "Validation Failed",
                                  [{"resource": "Status", "code": "custom", "field": "state",
                                    "message": "state is not included in the list"}])
            description = body.get("description") or ""
            if len(description) > 140:
                return self.error(422, "Validation Failed",
                                  [{"resource": "Status", "code": "custom", "field": "description",
                                    "message": "description is too long (maximum is 140 characters)"}])
            with st.lock:
                s = {"id": st.new_id(), "sha": m.group(1), "state": body["state"],
                     "description": description, "target_url": body.get("target_url"),
                     "context": body.get("context") or "default", "created_at": now(), "updated_at": now()}
                st.statuses.append(s)
            out = dict(s)
            del out["sha"]
            out["url"] = "%s/repos/%s/statuses/%s" % (st.base_url, st.repo, m.group(1))
            out["node_id"] = "SC_%d" % s["id"]
            out["creator"] = {"login": st.bot}
            return self.send_json(201, out)
        m = re.fullmatch(r"/collaborators/([A-Za-z0-9-]+(?:\[bot\])?)/permission", rest)
        if m and self.command == "GET":
            login = m.group(1)
            if login not in st.permissions:
                return self.error(404, "%s is not a user" % login)
            permission = st.permissions[login]
            role = permission
            # GitHub maps the maintain role to "write" and triage to "read" in `permission`.
            if permission == "maintain":
                permission = "write"
            elif permission == "triage":
                permission = "read"
            return self.send_json(200, {"permission": permission, "role_name": role,
                                        "user": {"login": login, "type": "User"}})
        m = re.fullmatch(r"/pulls/(\d+)", rest)
        if m and self.command == "GET":
            pr = st.pulls.get(int(m.group(1)))
            if pr is None:
                return self.error(404, "Not Found")
            number = int(m.group(1))
            return self.send_json(200, {
                "url": "%s/repos/%s/pulls/%d" % (st.base_url, st.repo, number),
                "number": number, "state": pr.get("state", "open"), "title": pr.get("title", "a change"),
                "head": {"ref": pr["head_ref"], "sha": pr["head_sha"], "label": "octo:" + pr["head_ref"]},
                "base": {"ref": pr["base_ref"], "sha": pr.get("base_sha", "0" * 40), "label": "octo:" + pr["base_ref"]},
            })
        return self.error(404, "Not Found")

    def list_comments(self, issue, query):
        st = self.server.state
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = int(query.get("page", ["1"])[0])
        with st.lock:
            mine = [c for c in st.comments if c["issue"] == issue]
            chunk = mine[(page - 1) * per_page: page * per_page]
            payload = [st.comment_json(c) for c in chunk]
        headers = {}
        last = max(1, (len(mine) + per_page - 1) // per_page)
        if page < last:
            base = "%s/repos/%s/issues/%d/comments" % (st.base_url, st.repo, issue)
            headers["Link"] = '<%s?per_page=%d&page=%d>; rel="next", <%s?per_page=%d&page=%d>; rel="last"' % (
                base, per_page, page + 1, base, per_page, last)
        return self.send_json(200, payload, headers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="octo/kernels")
    ap.add_argument("--setup", help="JSON file: token, permissions, pulls, comments")
    ap.add_argument("--log", required=True, help="JSON lines, one per request")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--state-out", help="write comments/statuses/reactions here on exit")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--max-requests", type=int, default=2000)
    args = ap.parse_args()

    setup = json.load(open(args.setup)) if args.setup else {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    server.state = State(setup, args.repo, "http://127.0.0.1:%d" % port)
    server.log_path = args.log
    server.log_lock = threading.Lock()
    server.count = 0
    server.max_requests = args.max_requests
    open(args.log, "a").close()
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        timer.cancel()
        if args.state_out:
            st = server.state
            with open(args.state_out, "w") as f:
                json.dump({"comments": st.comments, "statuses": st.statuses, "reactions": st.reactions,
                           "issues": st.issues}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
