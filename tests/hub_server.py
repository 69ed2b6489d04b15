"""A stand-in Hugging Face hub: a real HTTP server on 127.0.0.1 serving local folders as model repositories.

Point ``HF_ENDPOINT`` at :attr:`FakeHub.url` (in a fresh process: huggingface_hub reads it on import) and
``from_pretrained("owner/name")`` runs the real huggingface_hub and transformers download code against it. The server
answers what those libraries ask for ``from_pretrained`` of a model and of a tokenizer, with the headers they read
(huggingface_hub's ``file_download.get_hf_file_metadata``, ``utils._http.hf_raise_for_status``,
``hf_api.model_info`` and ``hf_api.list_repo_tree``):

* ``HEAD``/``GET /{repo}/resolve/{revision}/{filename}``: the file, with ``ETag`` (a git blob sha1, or for an LFS file
  its sha256, also as ``X-Linked-Etag``/``X-Linked-Size``), ``X-Repo-Commit`` and ``Content-Length``;
* ``GET /api/models/{repo}[/revision/{revision}]``: the model info whose ``sha`` ``resolve_revision`` pins every
  later download to;
* ``GET /api/models/{repo}/tree/{revision}[/{path}]``: the file listing (``list_repo_files``, chat templates).

:meth:`FakeHub.corrupt` serves a file damaged (one byte flipped, same size and headers), as a broken connection or
mirror would. Errors carry the hub's ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``), which
huggingface_hub turns into its typed exceptions. Anything else is a plain 404, and every request is logged in
:attr:`FakeHub.requests`, so a request a newer library makes shows up there.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

_REPO = r"(?P<repo>[^/]+(?:/[^/]+)?)"
_RESOLVE = re.compile(rf"^/{_REPO}/resolve/(?P<revision>[^/]+)/(?P<filename>.+)$")
_INFO = re.compile(rf"^/api/models/{_REPO}(?:/revision/(?P<revision>[^/]+))?$")
_TREE = re.compile(rf"^/api/models/{_REPO}/tree/(?P<revision>[^/]+)(?:/(?P<folder>.*))?$")
#: Suffixes the hub stores with git LFS (as ``.gitattributes`` of a new model repository does).
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".model", ".gguf")
_DATE = "2024-01-01T00:00:00.000Z"


@dataclass(frozen=True)
class Request:
    """One request the hub answered: method, path (query string dropped, unquoted), status, and which endpoint.

    ``route`` is ``"resolve"``, ``"info"`` or ``"tree"``, or ``""`` for a request the fake hub does not serve.
    """

    method: str
    path: str
    status: int
    route: str


@dataclass(frozen=True)
class _File:
    """A served file and the identifiers the hub gives it."""

    data: bytes
    blob_id: str  # git blob sha1: the ETag of a regular file, the ``oid`` in a tree listing
    sha256: str
    lfs: bool

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.blob_id

    def tree_entry(self, path: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "file", "oid": self.blob_id, "size": len(self.data), "path": path}
        if self.lfs:
            entry["lfs"] = {"oid": self.sha256, "size": len(self.data), "pointerSize": 134}
        return entry


@dataclass(frozen=True)
class _Repo:
    """A served repository: its files by path, and a commit hash that names its content."""

    files: dict[str, _File]
    commit: str


def _load_repo(folder: Path) -> _Repo:
    """Every file under ``folder``, and a 40-hex commit hash derived from all of them (stable across runs)."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        files[path.relative_to(folder).as_posix()] = _File(
            data, blob, hashlib.sha256(data).hexdigest(), path.name.endswith(LFS_SUFFIXES)
        )
    commit = hashlib.sha1(json.dumps({name: f.blob_id for name, f in files.items()}).encode()).hexdigest()
    return _Repo(files, commit)


class FakeHub:
    """A threaded HTTP server on a free port of 127.0.0.1, serving ``repos`` (repo id -> local folder) as the hub does.

    Use it as a context manager or call :meth:`close`; :attr:`requests` logs every request in order.
    """

    def __init__(self, repos: dict[str, str | Path]) -> None:
        self.repos = {repo_id: _load_repo(Path(folder)) for repo_id, folder in repos.items()}
        self.requests: list[Request] = []
        self._corrupt: dict[tuple[str, str], int | None] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        # A short poll interval: close() waits at most that long for the serving loop to notice the shutdown.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-hub", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The endpoint to put in ``HF_ENDPOINT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        """Stop serving and free the port (safe to call twice)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> FakeHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def corrupt(self, repo_id: str, filename: str, times: int | None = None) -> None:
        """Serve ``filename`` of ``repo_id`` damaged: one byte flipped in the middle, same size, same ETag and headers.

        The next ``times`` downloads of it (every one with None; 0 serves it intact again), as a broken connection or
        mirror would.
        """
        with self._lock:
            self._corrupt[repo_id, filename] = times

    def _body(self, repo_id: str, filename: str, data: bytes) -> bytes:
        """What a ``GET`` of the file sends: its bytes, or damaged ones while :meth:`corrupt` says so."""
        with self._lock:
            left = self._corrupt.get((repo_id, filename), 0)
            if left == 0:
                return data
            if left is not None:
                self._corrupt[repo_id, filename] = left - 1
        middle = len(data) // 2
        return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]

    def downloaded(self, repo_id: str) -> set[str]:
        """The files of ``repo_id`` sent in full (a ``GET`` of ``/resolve/`` answered 200)."""
        names = set()
        for r in list(self.requests):
            match = _RESOLVE.match(r.path)
            if r.route == "resolve" and r.method == "GET" and r.status == 200 and match and match["repo"] == repo_id:
                names.add(match["filename"])
        return names


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``hub``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as httpx pools connections; every answer sets Content-Length

        def log_message(self, format: str, *args: Any) -> None:
            pass  # logged in hub.requests instead of on stderr

        def do_HEAD(self) -> None:
            self._route(body=False)

        def do_GET(self) -> None:
            self._route(body=True)

        def _route(self, body: bool) -> None:
            url = urlsplit(self.path)
            # Match before unquoting: a revision such as refs/pr/1 arrives as one quoted segment.
            if match := _RESOLVE.match(url.path):
                route, status = (
                    "resolve",
                    self._resolve(*map(unquote, match.group("repo", "revision", "filename")), body),
                )
            elif self.command == "GET" and (match := _TREE.match(url.path)):
                recursive = parse_qs(url.query).get("recursive", ["false"])[0].lower() == "true"
                route, status = (
                    "tree",
                    self._tree(
                        *map(unquote, match.group("repo", "revision")),
                        unquote(match["folder"] or "").strip("/"),
                        recursive,
                    ),
                )
            elif self.command == "GET" and (match := _INFO.match(url.path)):
                route, status = "info", self._info(unquote(match["repo"]), unquote(match["revision"] or "main"))
            else:
                route, status = "", self._send(404, {"X-Error-Message": "not served by the fake hub"}, b"", body)
            hub.log(Request(self.command, unquote(url.path), status, route))

        def _repo(self, repo_id: str, revision: str, body: bool = True) -> _Repo | int:
            """The repository at ``revision`` ("main" or its commit), else the status of the error sent."""
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, "RepoNotFound", f"Repository not found: {repo_id}", body)
            if revision not in ("main", repo.commit):
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}", body)
            return repo

        def _resolve(self, repo_id: str, revision: str, filename: str, body: bool) -> int:
            repo = self._repo(repo_id, revision, body)
            if isinstance(repo, int):
                return repo
            file = repo.files.get(filename)
            if file is None:  # X-Repo-Commit lets huggingface_hub cache the absence (.no_exist/) for this commit
                return self._error(
                    404,
                    "EntryNotFound",
                    f"{filename} does not exist on {revision}",
                    body,
                    {"X-Repo-Commit": repo.commit},
                )
            headers = {
                "ETag": f'"{file.etag}"',
                "X-Repo-Commit": repo.commit,
                "Accept-Ranges": "bytes",
                "Content-Type": "application/octet-stream",
            }
            if file.lfs:
                headers.update({"X-Linked-Etag": f'"{file.sha256}"', "X-Linked-Size": str(len(file.data))})
            data = hub._body(repo_id, filename, file.data) if body else file.data
            start = _range_start(self.headers.get("Range"), len(data))
            if start:  # huggingface_hub resumes an interrupted download with Range: bytes=N-
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                return self._send(206, headers, data[start:], body)
            return self._send(200, headers, data, body)

        def _info(self, repo_id: str, revision: str) -> int:
            repo = self._repo(repo_id, revision)
            if isinstance(repo, int):
                return repo
            info = {
                "_id": repo.commit[:24],
                "id": repo_id,
                "modelId": repo_id,
                "author": repo_id.partition("/")[0],
                "sha": repo.commit,
                "lastModified": _DATE,
                "createdAt": _DATE,
                "private": False,
                "disabled": False,
                "gated": False,
                "library_name": "transformers",
                "pipeline_tag": "text-generation",
                "tags": ["transformers", "safetensors", "text-generation"],
                "siblings": [{"rfilename": name} for name in repo.files],
            }
            return self._json(info)

        def _tree(self, repo_id: str, revision: str, folder: str, recursive: bool) -> int:
            repo = self._repo(repo_id, revision)
            if isinstance(repo, int):
                return repo
            prefix = f"{folder}/" if folder else ""
            below = [name for name in repo.files if name.startswith(prefix)]
            if folder and not below:
                return self._error(404, "EntryNotFound", f"{folder} does not exist on {revision}", True)
            entries: dict[str, dict[str, Any]] = {}
            for name in below:
                parts = name[len(prefix) :].split("/")
                for depth in range(1, len(parts)):  # the folders on the way, as the hub lists them
                    sub = prefix + "/".join(parts[:depth])
                    if recursive or depth == 1:
                        oid = hashlib.sha1(sub.encode()).hexdigest()
                        entries.setdefault(sub, {"type": "directory", "oid": oid, "size": 0, "path": sub})
                if recursive or len(parts) == 1:
                    entries[name] = repo.files[name].tree_entry(name)
            return self._json(list(entries.values()))

        def _error(self, status: int, code: str, message: str, body: bool, extra: dict[str, str] | None = None) -> int:
            headers = {
                "X-Error-Code": code,
                "X-Error-Message": message,
                "Content-Type": "application/json",
                **(extra or {}),
            }
            return self._send(status, headers, json.dumps({"error": message}).encode(), body)

        def _json(self, obj: Any) -> int:
            return self._send(200, {"Content-Type": "application/json"}, json.dumps(obj).encode(), True)

        def _send(self, status: int, headers: dict[str, str], data: bytes, body: bool) -> int:
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(data))}.items():
                self.send_header(key, value)
            self.end_headers()
            if body:
                self.wfile.write(data)
            return status

    return Handler


def _range_start(header: str | None, size: int) -> int:
    """The first byte a ``Range: bytes=N-`` header asks for, else 0 (the whole file)."""
    match = re.fullmatch(r"bytes=(\d+)-", header or "")
    return int(match[1]) if match and int(match[1]) < size else 0
