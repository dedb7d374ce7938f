"""Trust boundaries, measured: forged sidecars refused, oversized requests refused, bad command
lines answered at once.

1. Sidecars: a session is saved (signed), then forged in the ways an attacker or a careless copy
   could (unsigned, an answer or the code edited, another user's secret, a signature copied from
   another file, "trusted": true added); each is loaded and counted refused (history only) or
   trusted. Also the cost of signing and verifying a large session.
2. Requests: a real ``jupyter server`` (a subprocess on a free port, its own data dirs) gets
   oversized, deep and overlong POSTs; each answer's status and time is printed.
3. Command line: ``jupyter dcpilot run`` with bad inputs, as a user runs it (a subprocess);
   wall time and exit status, median and max of ``--repeat`` runs, on a small file and on a
   1,000,000-row one.
4. The files around the data (issue 28, ``_trust_files.py``): sidecars that are links, FIFOs,
   huge or copied beside another notebook; a long session's sidecar size; the signing secret;
   bad decisions files and the documented plan edits; CSV files the input checks could not read;
   ``--out`` over the user's files; survival durations and names with line breaks; a table of
   20,000 columns against the diagnosis's budget.

    python benchmarks/bench_trust.py [--repeat 3] [--rows 1000000] [--only files] [--wide 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jupyter_dcpilot.engine import signatures  # noqa: E402
from jupyter_dcpilot.engine.session import Decision, Session, Step, now, sidecar_path  # noqa: E402

BIN = Path(sys.executable).parent


def sidecars(folder: Path) -> None:
    print("## Forged sidecars")
    notebook = folder / "nb.ipynb"

    def genuine() -> dict:
        session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df",
                          hints={"target": "y"})
        session.plan = [Step(id="s1", episode="custom", title="Custom", gate="custom_code",
                             code="import os; os.system('id')", decision_id="d1-aaaaaaaa")]
        session.decisions = [Decision(id="d1-aaaaaaaa", step_id="s1", gate="custom_code", question="Run?",
                                      options=[{"id": "run"}, {"id": "skip"}], choice="skip", by="user",
                                      at=now())]
        session.save()
        return json.loads(Path(session.path).read_text())

    def other_file() -> str:
        other = folder / "other.ipynb"
        Session(notebook=str(other), path=str(sidecar_path(other)), frame="x").save()
        return json.loads(sidecar_path(other).read_text())["signature"]

    def unsigned(d):
        d.pop("signature")

    def answer_edited(d):
        d["decisions"][0]["choice"] = "run"

    def code_edited(d):
        d["plan"][0]["code"] += "; os.system('curl evil')"

    def trusted_claimed(d):
        d.pop("signature")
        d["trusted"] = True

    def other_secret(d):
        rest = {k: v for k, v in d.items() if k != "signature"}
        d["signature"] = signatures.signature(signatures.serialize(rest), os.urandom(64))

    def copied_signature(d):
        d["signature"] = other_file()

    def garbage(d):
        d["signature"] = "hmac-sha256:" + "0" * 64

    def wrong_type(d):
        d["signature"] = {"scheme": "none"}

    forgeries = [unsigned, answer_edited, code_edited, trusted_claimed, other_secret, copied_signature,
                 garbage, wrong_type]
    refused = 0
    for forge in forgeries:
        data = genuine()
        forge(data)
        sidecar_path(notebook).write_text(json.dumps(data))
        loaded = Session.load(sidecar_path(notebook))
        ok = loaded.trusted is False and all(d.choice is None for d in loaded.decisions)
        refused += ok
        print(f"- {forge.__name__.replace('_', ' ')}: {'refused (history only)' if ok else 'TRUSTED'}")
    genuine()
    kept = Session.load(sidecar_path(notebook)).trusted
    print(f"forged sidecars refused: {refused} of {len(forgeries)}; the genuine one trusted: {kept}")

    big = Session(notebook=str(notebook), path=str(sidecar_path(notebook)), frame="df")
    big.transcript = [{"at": now(), "kind": "observe", "text": "x" * 200} for _ in range(5000)]
    big.llm_payloads = [{"payload": {"messages": ["y" * 2000] * 5}} for _ in range(100)]
    plain = folder / "plain.json"
    runs = []
    for _ in range(9):  # interleaved, so both see the same load
        started = time.perf_counter()
        plain.write_text(big.to_json())  # what a save cost before sidecars were signed
        unsigned = time.perf_counter()
        big.save()
        saved = time.perf_counter()
        Session.load(big.path)
        runs.append((unsigned - started, saved - unsigned, time.perf_counter() - saved))
    size = Path(big.path).stat().st_size

    def ms(i: int) -> str:
        return f"{statistics.median(r[i] for r in runs) * 1000:.0f} ms"

    print(f"a {size / 2**20:.1f} MiB sidecar, median of 9: plain write {ms(0)}, signed save {ms(1)}, "
          f"verified load {ms(2)}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def requests(folder: Path) -> None:
    print("\n## Oversized and malformed requests (a real jupyter server)")
    port, token = free_port(), "bench-token"
    env = {**os.environ, "JUPYTER_DATA_DIR": str(folder / "data"), "JUPYTER_RUNTIME_DIR": str(folder / "rt")}
    root = folder / "root"
    root.mkdir()
    server = subprocess.Popen(
        [str(BIN / "jupyter"), "server", f"--port={port}", f"--IdentityProvider.token={token}",
         "--ServerApp.open_browser=False", f"--ServerApp.root_dir={root}", "--allow-root",
         "--ServerApp.port_retries=0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/dcpilot/api/sessions"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/dcpilot/api/status?token={token}", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        base = {"path": "a.ipynb", "frame": "df"}
        cases = [
            ("10 MB goal + 5 MB approve", json.dumps({**base, "goal": "x" * 10_000_000, "approve": "y" * 5_000_000})),
            ("200,000-deep JSON (400 kB)", "[" * 200_000 + "]" * 200_000),
            ("30,000-deep JSON (60 kB)", "[" * 30_000 + "]" * 30_000),
            ("approve nested 7 deep", json.dumps({**base, "approve": {"outliers": {"a": {"b": {"c": {"d": {}}}}}}})),
            ("goal of 4,001 characters", json.dumps({**base, "goal": "g" * 4001})),
            ("target of 1,001 characters", json.dumps({**base, "target": "t" * 1001})),
            ("approve {\"columns\": 5}", json.dumps({**base, "approve": {"columns": 5}})),
            ("a JSON list", "[1, 2]"),
            ("not JSON", "{oops"),
            ("a valid body (no kernel runs a.ipynb)", json.dumps({**base, "target": "y", "goal": "predict y"})),
        ]
        for name, body in cases:
            request = urllib.request.Request(url, data=body.encode(), method="POST",
                                             headers={"Authorization": f"token {token}"})
            started = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    status, text = answer.status, answer.read()
            except urllib.error.HTTPError as error:
                status, text = error.code, error.read()
            elapsed = (time.perf_counter() - started) * 1000
            message = json.loads(text or b"{}").get("message", "")
            print(f"- {name}: {status} in {elapsed:.0f} ms — {message[:110]}")
        files = [p for p in root.rglob("*") if p.is_file()]
        print(f"files written under the server root: {len(files)}")
    finally:
        server.terminate()
        server.wait(30)


def command_line(folder: Path, repeat: int, rows: int) -> None:
    print("\n## Bad command lines (`jupyter dcpilot run`, a subprocess each)")
    rng = np.random.default_rng(0)
    small = folder / "small.csv"
    frame = pd.DataFrame({"age": rng.normal(50, 10, 300).round(), "y": rng.integers(0, 2, 300),
                          "city": rng.choice(["Oslo", "Lima"], 300), "flag": 1})
    frame.to_csv(small, index=False)
    large = folder / "large.csv"
    pd.DataFrame({"age": rng.normal(50, 10, rows).round(), "y": rng.integers(0, 2, rows),
                  "city": rng.choice(["Oslo", "Lima"], rows), "flag": 1,
                  "x": rng.normal(size=rows)}).to_csv(large, index=False)
    (folder / "bad.json").write_text('{"columns": 5}')
    cases = [
        ("unknown --target (typo)", ["--target", "yy"]),
        ("--time on a text column", ["--target", "y", "--time", "city"]),
        ("constant target", ["--target", "flag"]),
        ("decisions file against the schema", ["--target", "y", "--approve", str(folder / "bad.json")]),
        ("missing --target (argparse)", []),
    ]
    print("| case | file | exit | one line | median s | max s |\n|---|---|---|---|---|---|")
    for path, label in ((small, "300 rows"), (large, f"{rows:,} rows, {large.stat().st_size / 2**20:.0f} MB")):
        for name, options in cases:
            times, codes, lines = [], set(), set()
            for _ in range(repeat):
                out = folder / "out"
                started = time.perf_counter()
                done = subprocess.run([str(BIN / "jupyter"), "dcpilot", "run", str(path), *options, "--out", str(out)],
                                      capture_output=True, text=True, timeout=120)
                times.append(time.perf_counter() - started)
                codes.add(done.returncode)
                lines.add(sum("error:" in line for line in done.stderr.splitlines()))
                assert not out.exists(), "a refused run must write nothing"
            print(f"| {name} | {label} | {sorted(codes)} | {lines == {1}} | {statistics.median(times):.2f} | {max(times):.2f} |")


def files_around_the_data(folder: Path, repeat: int, wide: int) -> None:
    from _trust_files import (
        compaction,
        edits_and_decisions,
        input_files,
        odd_inputs,
        output_folders,
        secrets,
        sidecar_files,
        wide_table,
    )

    for section in (sidecar_files, compaction, secrets):
        part = folder / section.__name__
        part.mkdir(parents=True)
        section(part)
    for section in (edits_and_decisions, input_files):
        part = folder / section.__name__
        part.mkdir(parents=True)
        section(part, repeat)
    for section in (output_folders, odd_inputs):
        part = folder / section.__name__
        part.mkdir(parents=True)
        section(part)
    if wide:
        wide_table(wide)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["files"], help="only the attacks on the files around the data")
    parser.add_argument("--wide", type=int, default=20_000, help="columns of the wide table (0: skip it)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="dcpilot-bench-trust-"))
    os.environ["JUPYTER_DATA_DIR"] = str(folder / "data")  # a secret of its own, not the user's
    try:
        print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)\n")
        if args.only is None:
            sidecars(folder)
            requests(folder)
            command_line(folder, args.repeat, args.rows)
        files_around_the_data(folder / "files", args.repeat, args.wide)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
