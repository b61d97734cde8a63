"""Restore benchmark: how quickly a run gets a usable, writable copy of a golden data directory.

For each pgbench scale it builds (or reuses) a golden PostgreSQL 15 cluster, then per repeat:

* starts the golden itself in place (the baseline every copy is compared with), and
* restores it with each method: ``reflink-xfs`` (the project's SnapshotStore, xfs-loop strategy),
  ``overlayfs`` (golden pgdata as lowerdir) and ``copy`` (``cp -a --reflink=never``),

timing restore-to-first-query (copy + relocate + start + ``SELECT 1``) and the first write to
pgbench_accounts. Everything lives in a store of its own under ``cache_dir()/bench`` so the
benchmark never shares a mount or a golden with real runs. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType

import psycopg

from dbabench.env.local import Golden, GoldenRecipe, LocalEnvironment
from dbabench.env.postgres import PG_BIN, PostgresError, PostgresInstance
from dbabench.env.processes import ProcessTable, chown_for_postgres, free_port
from dbabench.env.snapshot import SnapshotError, SnapshotStore, can_mount_xfs
from dbabench.model.tool import ShutdownMode
from dbabench.paths import cache_dir, runs_dir

METHODS = ("reflink-xfs", "overlayfs", "copy")
BASELINE = "golden-in-place"
ACCOUNTS_PER_SCALE = 100_000  # pgbench: rows of pgbench_accounts per unit of scale

# The design's targets for a restore (architecture.md, "Measured facts about restore").
RESTORE_LIMIT_MS = 1000.0
FIRST_WRITE_SLACK_MS = 5.0  # "within a few ms of the golden's"
SIZE_INDEPENDENCE_RATIO = 1.5  # largest scale's median over the smallest's; data grows 10x


class BenchError(RuntimeError):
    pass


@dataclass
class Measurement:
    run: str
    method: str
    scale: int
    repeat: int
    restore_ms: float
    first_write_ms: float
    aid: int
    golden_bytes: int


Prepare = Callable[[SnapshotStore, Golden, str, contextlib.ExitStack], Path]


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchError(f"{' '.join(argv)} failed ({result.returncode}): "
                         f"{(result.stderr or result.stdout).strip()[:500]}")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- golden ----------------------------------------------------------------------------------

def _pgbench_init(scale: int, instance: PostgresInstance) -> None:
    _progress(f"  pgbench -i -s {scale}")
    result = subprocess.run(
        [str(PG_BIN / "pgbench"), "-i", "-q", "-s", str(scale), "-h", instance.host,
         "-p", str(instance.port), "-U", "postgres", instance.database],
        capture_output=True, text=True,
        env={**os.environ, "PGPASSWORD": instance.credentials.superuser_password})
    if result.returncode != 0:
        raise BenchError(f"pgbench -i -s {scale} failed: {result.stderr.strip()[-1000:]}")
    with psycopg.connect(instance.dsn(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def _golden(env: LocalEnvironment, scale: int) -> tuple[Golden, bool]:
    """The golden for ``scale`` and whether this run built it."""
    key = f"pgbench-s{scale}"
    built = not (env.store.golden(key) / "golden.json").exists()
    if built:
        _progress(f"building golden {key}")
    # ensure_golden stops the build fast: after an immediate stop every clone would start
    # through crash recovery and the restore times would measure that instead.
    golden = env.ensure_golden(GoldenRecipe(key, "postgres", {},
                                            functools.partial(_pgbench_init, scale)))
    # XFS keeps speculative preallocation past the end of files just written until they are
    # evicted or the store is remounted; trim it so the size does not depend on build or reuse.
    _run(["xfs_spaceman", "-c", "prealloc -s", str(env.store.root)])
    return golden, built


def _disk_usage(path: Path) -> int:
    return sum(os.lstat(os.path.join(d, f)).st_blocks * 512
               for d, _, files in os.walk(path) for f in files)


# -- the ways to get a data directory --------------------------------------------------------
# Each registers its undo on ``undo`` *before* acting, so an interrupt half-way still cleans up.

def _in_place(store: SnapshotStore, golden: Golden, name: str, undo: contextlib.ExitStack) -> Path:
    undo.callback(_drop_run_files, golden.path)
    return golden.path


def _drop_run_files(home: Path) -> None:
    # Every later clone copies the golden's whole directory: keep the baseline's logs out of it.
    shutil.rmtree(home / "log", ignore_errors=True)
    (home / "postmaster.out").unlink(missing_ok=True)


def _reflink_clone(store: SnapshotStore, golden: Golden, name: str,
                   undo: contextlib.ExitStack) -> Path:
    undo.callback(store.discard, store.root / "clones" / name)
    return _give_to_server(store.clone(golden.path, name))


def _give_to_server(copy: Path) -> Path:
    """A copy of the sealed golden is the harness's, as the golden is: a run's restore gives
    it to the server (LocalEnvironment), and so does this, inside the timing."""
    chown_for_postgres(copy, tree=True)
    return copy


def _overlay(store: SnapshotStore, golden: Golden, name: str, undo: contextlib.ExitStack) -> Path:
    home = store.root / "clones" / name
    undo.callback(store.discard, home)
    upper, work, merged = home / "upper", home / "work", home / "pgdata"
    for d in (upper, work, merged):
        d.mkdir(parents=True)
    # The merged root takes the upper root's owner and mode, and postgres refuses a data
    # directory that is not its own with mode 0700.
    chown_for_postgres(upper)
    upper.chmod(0o700)
    undo.callback(_umount, merged)
    _run(["mount", "-t", "overlay", "overlay", "-o",
          f"lowerdir={golden.path / 'pgdata'},upperdir={upper},workdir={work}", str(merged)])
    return home


def _umount(mountpoint: Path) -> None:
    if os.path.ismount(mountpoint):
        _run(["umount", str(mountpoint)])


def _full_copy(store: SnapshotStore, golden: Golden, name: str,
               undo: contextlib.ExitStack) -> Path:
    target = store.root / "clones" / name
    undo.callback(store.discard, target)
    _run(["cp", "-a", "--reflink=never", str(golden.path), str(target)])
    return _give_to_server(target)


PREPARE: dict[str, Prepare] = {
    BASELINE: _in_place, "reflink-xfs": _reflink_clone, "overlayfs": _overlay, "copy": _full_copy,
}
# The ways whose server reads the golden's own files (in place, or as an overlay's lower layer):
# the golden is sealed, closed to the server, so it is opened to it first, outside the timing (a
# run never does this), and sealed again after.
OPEN_GOLDEN = (BASELINE, "overlayfs")


# -- one measurement -------------------------------------------------------------------------

def _first_write(instance: PostgresInstance, aid: int) -> float:
    conninfo = psycopg.conninfo.make_conninfo(instance.dsn(), options="-c synchronous_commit=on")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        started = time.perf_counter()
        cur = conn.execute("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = %s",
                           (aid,))
        elapsed = time.perf_counter() - started
        if cur.rowcount != 1:
            raise BenchError(f"UPDATE of aid {aid} touched {cur.rowcount} rows, expected 1")
    return elapsed * 1000


def _measure(method: str, store: SnapshotStore, golden: Golden, procs: ProcessTable, *,
             run: str, scale: int, repeat: int, aid: int, golden_bytes: int) -> Measurement:
    # Write back what the previous measurement left dirty, so it is not flushed under this one.
    _run(["sync"])
    # The golden must come back clean for the clones that follow; a clone is thrown away.
    stop_mode = ShutdownMode.fast if method == BASELINE else ShutdownMode.immediate
    with contextlib.ExitStack() as undo:
        if method in OPEN_GOLDEN:
            undo.callback(store.seal, golden.path)
            chown_for_postgres(golden.path, tree=True)
        started = time.perf_counter()
        home = PREPARE[method](store, golden, f"{method}-s{scale}-r{repeat}-{os.getpid()}", undo)
        instance = PostgresInstance(home, golden.credentials, database=golden.database)
        undo.callback(instance.stop, procs, stop_mode)
        instance.relocate(free_port())
        instance.start(procs)  # returns after the first successful SELECT 1
        restore_ms = (time.perf_counter() - started) * 1000
        first_write_ms = _first_write(instance, aid)
    return Measurement(run=run, method=method, scale=scale, repeat=repeat,
                       restore_ms=round(restore_ms, 2), first_write_ms=round(first_write_ms, 3),
                       aid=aid, golden_bytes=golden_bytes)


# -- report ----------------------------------------------------------------------------------

def _fmt_bytes(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _spread(values: list[float], digits: int) -> str:
    return (f"{statistics.median(values):.{digits}f}"
            f" ({min(values):.{digits}f}–{max(values):.{digits}f})")


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _report(results: list[Measurement], methods: list[str], scales: list[int]) -> str:
    def of(method: str, scale: int) -> list[Measurement]:
        return [m for m in results if m.method == method and m.scale == scale]

    rows = [["method", "scale", "restore ms median (min–max)",
             "first write ms median (min–max) vs golden ms", "golden size"]]
    for scale in scales:
        golden_write = statistics.median(m.first_write_ms for m in of(BASELINE, scale))
        for method in (BASELINE, *methods):
            ms = of(method, scale)
            write = _spread([m.first_write_ms for m in ms], 1)
            rows.append([method, str(scale), _spread([m.restore_ms for m in ms], 0),
                         write if method == BASELINE else f"{write} vs {golden_write:.1f}",
                         _fmt_bytes(ms[0].golden_bytes)])

    def verdict(met: bool) -> str:
        return "met" if met else "NOT met"

    lines = ["", "Targets from the design (information only, not a pass/fail of this script):"]
    lo, hi = min(scales), max(scales)
    lines.append(f"  thin clone independent of data size (median restore at scale {hi}"
                 f" <= {SIZE_INDEPENDENCE_RATIO}x scale {lo}):")
    for method in methods:
        if lo == hi:
            lines.append(f"    {method}: n/a, needs two scales")
            continue
        a = statistics.median(m.restore_ms for m in of(method, lo))
        b = statistics.median(m.restore_ms for m in of(method, hi))
        lines.append(f"    {method}: {verdict(b <= SIZE_INDEPENDENCE_RATIO * a)}"
                     f" ({b:.0f} vs {a:.0f} ms, x{b / a:.2f})")
    lines.append(f"  restore <= {RESTORE_LIMIT_MS:.0f} ms (slowest repeat):")
    for method in methods:
        parts = [f"s{s} {max(m.restore_ms for m in of(method, s)):.0f} ms" for s in scales]
        met = all(max(m.restore_ms for m in of(method, s)) <= RESTORE_LIMIT_MS for s in scales)
        lines.append(f"    {method}: {verdict(met)} ({', '.join(parts)})")
    lines.append(f"  first write within {FIRST_WRITE_SLACK_MS:.0f} ms of the golden's (medians):")
    for method in methods:
        parts, met = [], True
        for s in scales:
            delta = (statistics.median(m.first_write_ms for m in of(method, s))
                     - statistics.median(m.first_write_ms for m in of(BASELINE, s)))
            met = met and delta <= FIRST_WRITE_SLACK_MS
            parts.append(f"s{s} {delta:+.1f} ms")
        lines.append(f"    {method}: {verdict(met)} ({', '.join(parts)})")
    return _table(rows) + "\n" + "\n".join(lines)


# -- main ------------------------------------------------------------------------------------

def _csv(kind: Callable[[str], object], choices: tuple[str, ...] = ()) -> Callable[[str], list]:
    def parse(text: str) -> list:
        items = [kind(t.strip()) for t in text.split(",") if t.strip()]
        bad = [i for i in items if choices and i not in choices]
        if not items or bad:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a comma-separated list" + (f" of {', '.join(choices)}"
                                                                if choices else ""))
        return items
    return parse


def _interrupt_once() -> None:
    """First SIGINT/SIGTERM unwinds into the finally blocks; later ones must not cut them short."""
    state = {"interrupted": False}

    def handler(signum: int, frame: FrameType | None) -> None:
        if state["interrupted"]:
            _progress("still cleaning up (stopping instances, unmounting), please wait")
            return
        state["interrupted"] = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _drop_cache(store: SnapshotStore) -> None:
    # The goldens live inside the store's image, so only the whole directory gives the space back.
    if os.path.ismount(store.root):
        _progress(f"kept {store.cache}: another process still holds the bench store")
        return
    shutil.rmtree(store.cache)
    _progress(f"deleted {store.cache} (use --keep-cache to reuse the goldens next time)")


def _machine(load_at_start: float) -> str:
    pg = subprocess.run([str(PG_BIN / "postgres"), "--version"], capture_output=True,
                        text=True).stdout.strip()
    # Other work on a 2-core machine moves these timings; the load says how much there was.
    return (f"{os.cpu_count()} cores, Linux {platform.release()}, {pg},"
            f" load average {load_at_start:.2f} at start, {os.getloadavg()[0]:.2f} at end")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=_csv(int), default=[10, 100],
                        help="pgbench scales, comma-separated (default 10,100)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="measurements per method and scale (default 3)")
    parser.add_argument("--methods", type=_csv(str, METHODS), default=list(METHODS),
                        help=f"comma-separated, of {','.join(METHODS)} (default all)")
    parser.add_argument("--keep-cache", action="store_true",
                        help="keep the goldens for the next run (else deleted at the end)")
    parser.add_argument("--json", type=Path, help="append one JSON line per measurement here")
    parser.add_argument("--smoke", action="store_true",
                        help="does the script run: scale 1, one repeat (instead of --scales and"
                             " --repeats), in a store of its own, in seconds")
    args = parser.parse_args(argv)
    if args.smoke:
        args.scales, args.repeats = [1], 1
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if not can_mount_xfs():
        print("error: this benchmark mounts an XFS image and overlays: it needs root and xfsprogs"
              " (mkfs.xfs). Install with: make system-deps", file=sys.stderr)
        return 2

    _interrupt_once()
    began = time.monotonic()
    load_at_start = os.getloadavg()[0]
    run = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # a smoke run's store is its own: it deletes it, never a store kept with --keep-cache
    bench_cache = cache_dir() / ("bench-smoke" if args.smoke else "bench")
    bench_cache.mkdir(exist_ok=True)
    store = SnapshotStore(bench_cache, "xfs-loop")
    # Under runs_dir() so that a later `dbabench run` reaps what a killed benchmark left running.
    run_dir = runs_dir() / f"bench-reset-{run.replace(':', '')}-{os.getpid()}"
    run_dir.mkdir(parents=True)
    results: list[Measurement] = []
    goldens: list[str] = []
    json_out = args.json.open("a") if args.json else None
    try:
        with LocalEnvironment(run_dir, run_dir.name, store) as env:
            for scale in args.scales:
                golden, built = _golden(env, scale)
                size = _disk_usage(golden.path)
                goldens.append(f"scale {scale} built in {golden.build_seconds:.0f} s" if built
                               else f"scale {scale} reused (built {golden.built_at[:16]})")
                for repeat in range(args.repeats):
                    aid = random.randint(1, ACCOUNTS_PER_SCALE * scale)
                    # Rotated so that no method always runs right after the golden's own start.
                    shift = repeat % len(args.methods)
                    order = args.methods[shift:] + args.methods[:shift]
                    for method in (BASELINE, *order):
                        _progress(f"scale {scale} repeat {repeat + 1}/{args.repeats}: {method}")
                        m = _measure(method, store, golden, env.procs, run=run, scale=scale,
                                     repeat=repeat, aid=aid, golden_bytes=size)
                        results.append(m)
                        if json_out:
                            json_out.write(json.dumps(asdict(m)) + "\n")
                            json_out.flush()
    except KeyboardInterrupt:
        _progress("interrupted; everything started was stopped and unmounted")
        return 130
    except (BenchError, SnapshotError, PostgresError, psycopg.Error) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if json_out:
            json_out.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        if not args.keep_cache:
            _drop_cache(store)

    print(f"dbabench restore benchmark, {run}, {_machine(load_at_start)}")
    print("store: XFS (reflink=1) on a loop-mounted image; golden, clones, overlay and copy all"
          " on it")
    print(f"goldens (pgbench -i, CHECKPOINT, fast stop): {'; '.join(goldens)}")
    print(_report(results, args.methods, args.scales))
    print(f"\nrun time: {(time.monotonic() - began) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
