"""The resident validate (auditor/lsp/resident.py, asked by auditor/lsp/ask.py): after each
edit of a series its answer is the cold run's report and exit code; it exits when idle and
when the repository is gone; a stale socket, a silent resident, one of another version and
another user's process are never used, and the run is cold, saying why; the resident answers
no other user's process."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import shutil
import socket
import subprocess
import sys
import threading
import typing as t
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from auditor.lsp import ask
from auditor.lsp.resident import Server
from tests.conftest import ROOT, run_line
from tests.estate import copy_estate
from tests.unit.lsp import residents

CQ = "clusters/gpu-prod/clusterqueues.yaml"
LQ = "tenants/team-a/gpu-prod/localqueues.yaml"
RBAC = "tenants/team-a/gpu-prod/rbac.yaml"
PROFILE = "tenants/team-a/profile.yaml"
CLUSTER_PROFILE = "clusters/gpu-prod/profile.yaml"
NEW = "tenants/team-a/gpu-prod/extra.yaml"
NEW_TEXT = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-z\n"  # not team-a's


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache directory of the test's own; every resident started in it is stopped after."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(folder))
    yield folder
    assert not residents.stop_all(), "a resident did not exit on SIGTERM"
    assert not residents.running()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_estate(tmp_path / "repo", "clusters", "tenants", "schemas")


def validate(repo: Path, *flags: str) -> tuple[int, str, str]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", "json", *flags])
    return result.exit_code, result.stdout, result.stderr


def write(repo: Path, path: str, change: Callable[[str], str] | None) -> None:
    """Change `path` (None: delete it; a new file's `change` gets "")."""
    file = repo / path
    if change is None:
        file.unlink()
        return
    file.write_text(change(file.read_text() if file.exists() else ""))


def replaced(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


EDITS: list[tuple[str, str, Callable[[str], str] | None]] = [
    ("a quota change", CQ, replaced('nominalQuota: "256"', 'nominalQuota: "512"')),
    ("a quota not canonical", CQ, replaced('nominalQuota: "512"', "nominalQuota: 512000m")),
    ("a new file", NEW, lambda _text: NEW_TEXT),
    ("a LocalQueue of a missing queue", LQ, replaced("clusterQueue: team-a-cq", "clusterQueue: x")),
    ("malformed YAML", LQ, replaced("clusterQueue: x", "clusterQueue: [team-a-cq")),
    ("the YAML mended", LQ, replaced("clusterQueue: [team-a-cq", "clusterQueue: team-a-cq")),
    ("a deleted file", NEW, None),
    ("a deleted file of objects", RBAC, None),
    ("a tenant profile change", PROFILE, replaced("Queues: [team-a-cq]", "Queues: []")),
    ("a cluster profile change", CLUSTER_PROFILE, lambda text: text + "  extra: nonsense\n"),
    ("the cluster profile mended", CLUSTER_PROFILE, replaced("  extra: nonsense\n", "")),
]


def test_answers_as_a_cold_run_after_each_edit(repo: Path) -> None:
    code, out, err = validate(repo, "--resident")
    assert "answered by the resident validate" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]
    seen = set()
    for what, path, change in EDITS:
        write(repo, path, change)
        cold = validate(repo, "--no-resident")
        warm = validate(repo)
        assert warm[:2] == cold[:2], f"after {what}: the resident's answer differs"
        if cold[0] == 2:  # a profile that does not parse: the resident says so, runs cold
            assert "did not answer" in warm[2] and "a cold run" in warm[2], warm[2]
        else:
            said = warm[2].splitlines()
            assert "answered by the resident validate" in said[-1], f"{what}: {warm[2]}"
            assert said[:-1] == cold[2].splitlines(), f"after {what}: other notes"
        seen.add((cold[0], len(json.loads(cold[1])["findings"]) if cold[0] != 2 else -1))
    assert len(seen) > 3, f"the edits should change the findings: {seen}"
    for more in (["--cluster", "gpu-prod"], ["--no-cache"]):  # what it does not answer: cold
        assert "answered by" not in validate(repo, *more)[2]
    assert "answers a plain run of every cluster" in validate(repo, "--resident", "--no-cache")[2]
    for form in ("text", "sarif"):  # every format through the one report path
        line = ["kueue-gitops", "--repo", str(repo), "validate", "--strict", "-o", form]
        cold_said, warm_said = run_line([*line, "--no-resident"]), run_line(line)
        assert "answered by the resident validate" in warm_said.stderr
        assert (warm_said.exit_code, warm_said.stdout) == (cold_said.exit_code, cold_said.stdout)


def test_exits_when_idle(repo: Path) -> None:
    pid = ask.start(repo, idle=0.5)
    assert residents.exited(pid), "the resident outlived its idle timeout"
    assert not ask.socket_path(repo).exists()
    code, _out, err = validate(repo)
    assert code in (0, 1) and "resident" not in err  # none runs: cold, nothing to say


def test_exits_when_the_repository_is_gone(repo: Path) -> None:
    pid = ask.start(repo)
    shutil.rmtree(repo)
    assert residents.exited(pid), "the resident outlived its repository"


def test_a_stale_socket_is_a_cold_run(repo: Path) -> None:
    path = ask.socket_path(repo)
    ask.make_folder()
    with socket.socket(socket.AF_UNIX) as dead, ask.address(path) as name:
        dead.bind(name)  # closed without listening: nobody answers on it
    code, out, err = validate(repo)
    assert "a stale socket; removed; a cold run" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]
    assert not path.exists()  # the next run is cold without a word
    assert "resident" not in validate(repo)[2]


def test_a_silent_resident_is_a_cold_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ask.DEADLINE_ENV, "0.5")
    path = ask.socket_path(repo)
    ask.make_folder()
    with socket.socket(socket.AF_UNIX) as silent, ask.address(path) as name:
        silent.bind(name)
        silent.listen(1)  # connections wait in the backlog, never answered
        code, out, err = validate(repo)
    assert "did not answer within its deadline; a cold run" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]


def fake_resident(path: Path, answer: bytes) -> threading.Thread:
    """A server on `path` that reads one question and answers `answer`."""
    ask.make_folder()
    server = socket.socket(socket.AF_UNIX)
    with ask.address(path) as name:
        server.bind(name)
    server.listen(1)

    def serve() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                conn.recv(ask.MAX_REQUEST)
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_another_version_is_not_used(repo: Path) -> None:
    header = {"identity": "an older kueue-gitops", "pid": 1, "started": 0.0, "ok": True}
    # Not a pickle: reading it would fail the run, so the run must not read it.
    thread = fake_resident(ask.socket_path(repo), json.dumps(header).encode() + b"\nnot pickled")
    code, out, err = validate(repo)
    thread.join(timeout=30)
    assert "is another version of kueue-gitops; a cold run" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]


def test_a_resident_of_another_install_is_not_used_and_resident_replaces_it(
    repo: Path, tmp_path: Path
) -> None:
    """A real resident run from another copy of the package (another install, or the checkout
    before an edit): a plain run does not use it; --resident stops it and starts its own."""
    other = tmp_path / "other-install"
    shutil.copytree(ROOT / "auditor", other / "auditor", ignore=shutil.ignore_patterns("__py*"))
    env = {**os.environ, "PYTHONPATH": str(other)}
    started = (
        f"from auditor.lsp import ask; print(ask.start(__import__('pathlib').Path({str(repo)!r})))"
    )
    old = int(
        subprocess.run(
            [sys.executable, "-c", started],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=residents.DEADLINE,
        ).stdout
    )
    code, out, err = validate(repo)
    assert f"the resident (pid {old}) is another version of kueue-gitops; a cold run" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]
    code, out, err = validate(repo, "--resident")
    assert residents.exited(old, 0), "the resident of the other install still runs"
    assert "answered by the resident validate" in err and f"pid {old}" not in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]


def test_the_resident_refuses_another_version(repo: Path) -> None:
    server = Server(Path(os.path.realpath(repo)), idle=60)
    try:
        asked: dict[str, t.Any] = {"protocol": ask.PROTOCOL, "identity": "older", "root": ""}
        head, _, body = server.reply(asked).partition(b"\n")
        assert json.loads(head)["ok"] is False and body == b""
        asked.update(identity=ask.identity(), root=str(server.root))
        head, _, body = server.reply(asked).partition(b"\n")
        assert json.loads(head)["ok"] is True
        report, _notes = pickle.loads(body)
        assert {c.name for c in report.clusters} == {"gpu-legacy", "gpu-prod", "gpu-staging"}
    finally:
        server.close()


# -- another user: the socket's folder is the user's own (0700); each side also asks who is at
# the other end (SO_PEERCRED), should the folder ever be opened to others. Root runs the other
# side as nobody; elsewhere no second uid is at hand.
NOBODY = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="runs a process as another user: root only")


def as_nobody(work: Callable[[], int]) -> int:
    """Fork a process that becomes uid and gid nobody and runs `work`; its pid."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 70
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            code = work()
        except BaseException as exc:
            os.write(2, f"as nobody: {exc!r}\n".encode())
        finally:
            os._exit(code)
    return pid


def ended(pid: int, deadline: float = 60.0) -> int:
    """The exit status of child `pid`, which must end within `deadline` seconds."""
    fd = os.pidfd_open(pid)
    try:
        assert select.select([fd], [], [], deadline)[0], "the other user's process did not end"
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def said(fd: int, deadline: float = 60.0) -> bytes:
    """What the other user's process wrote to the pipe `fd` (its end closed here already)."""
    assert select.select([fd], [], [], deadline)[0], "the other user's process said nothing"
    return os.read(fd, 64)


class Trap:
    """A pickle that, read, leaves a file: the proof that an answer was read."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[t.Any, ...]:
        return (Path.touch, (self.marker,))


@as_root
def test_an_answer_from_another_users_process_is_never_read(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "read"
    header = {"identity": ask.identity(), "pid": 1, "started": 0.0, "ok": True}
    answer = json.dumps(header).encode() + b"\n" + pickle.dumps((Trap(marker), []))
    ask.make_folder()
    server = socket.socket(socket.AF_UNIX)
    with ask.address(ask.socket_path(repo)) as name:
        server.bind(name)  # the path the user's run asks; it listens as another user

    listening = os.pipe()

    def serve() -> int:
        server.listen(1)
        os.write(listening[1], b"listening")
        if select.select([server], [], [], 30)[0]:
            conn, _ = server.accept()
            with conn, contextlib.suppress(OSError):
                conn.recv(ask.MAX_REQUEST)
                conn.sendall(answer)
        return 0

    pid = as_nobody(serve)
    server.close()
    os.close(listening[1])
    assert said(listening[0]) == b"listening"
    code, out, err = validate(repo)
    assert ended(pid) == 0
    assert "is served by another user's process (uid 65534); a cold run" in err, err
    assert not marker.exists()
    assert (code, out) == validate(repo, "--no-resident")[:2]


@as_root
def test_the_resident_says_nothing_to_another_users_process(repo: Path) -> None:
    ask.start(repo)
    path = ask.socket_path(repo)
    ask.folder().chmod(0o711)  # as if the folder had been opened to everyone
    path.chmod(0o777)
    request = {"protocol": ask.PROTOCOL, "identity": ask.identity(), "root": str(repo.resolve())}
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)  # reached through its descriptor
    heard = os.pipe()

    def connect() -> int:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(f"/proc/self/fd/{folder}/{path.name}")
            said = b""
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # hung up on
                sock.sendall(json.dumps(request).encode() + b"\n")
                sock.shutdown(socket.SHUT_WR)
                while chunk := sock.recv(1 << 16):
                    said += chunk
        os.write(heard[1], b"%d" % len(said))
        return 0

    pid = as_nobody(connect)
    os.close(folder)
    os.close(heard[1])
    assert said(heard[0]) == b"0"  # connected, asked, and answered nothing
    assert ended(pid) == 0
    os.close(heard[0])
    code, out, err = validate(repo)  # its own user's run is still answered
    assert "answered by the resident validate" in err, err
    assert (code, out) == validate(repo, "--no-resident")[:2]
