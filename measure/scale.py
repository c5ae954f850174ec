"""A full-size run: IllusionBench-shaped, `--protocol all`, through several loopback model
servers at 200 ms, beside a bare aiohttp loop over the same endpoints sending the same
requests.

    uv run python measure/scale.py                     # 10,835 rows a part: 130,020 requests
    uv run python measure/scale.py --rows 834          # ~10,000 requests (RSS baseline)
    uv run python measure/scale.py --rows 834 --skip-bare --endpoints 2

Each client is its own process (CPU from the kernel's accounting, peak RSS the process's
VmHWM); the servers are separate processes (`visioneval loopback --answer hash --latency
0.2`). The run uses `--no-report`; `visioneval report` is then timed on its own (wall, peak
RSS, page size). The bare loop builds the requests with visioneval's own IllusionBench
samples and OpenAI body (so both send the same bytes) and sends them with aiohttp and one
semaphore per endpoint, round robin: the engine's cost is the difference. Prints Markdown;
docs/PERFORMANCE.md records the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import throughput  # measure/: the same process measurements

LATENCY = throughput.LATENCY
ENV = throughput.ENV  # as on a user's machine: modules byte-compiled once


def start_servers(n: int) -> tuple[list[subprocess.Popen], list[str]]:
    procs, urls = [], []
    for _ in range(n):
        proc = subprocess.Popen(
            [sys.executable, "-m", "visioneval", "loopback", "--port", "0", "--answer", "hash",
             "--latency", str(LATENCY)], stdout=subprocess.PIPE, text=True, env=ENV)
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        if match is None:
            raise SystemExit(f"loopback did not start: {line!r}")
        procs.append(proc)
        urls.append(match.group(0) + "/v1")
    return procs, urls


def measure(cmd: list[str]) -> dict:
    """A client process measured as throughput.py measures it: stdout, wall s, CPU s
    (wait4), peak RSS MB (/proc VmHWM)."""
    stdout, wall, cpu, rss = throughput.measure(cmd)
    return {"stdout": stdout, "wall": wall, "cpu": cpu, "rss": rss}


def run_visioneval(urls: list[str], data: Path, work: Path, concurrency: int) -> dict:
    out_dir = work / "run"
    cmd = [sys.executable, "-m", "visioneval", "illusionbench", "--backend", "openai",
           "--model", "m", "--data-dir", str(data), "--protocol", "all",
           "--concurrency", str(concurrency), "--no-progress", "--no-report",
           "--out", str(out_dir), "--cache-dir", str(work / "cache")]
    for url in urls:
        cmd += ["--base-url", url]
    result = measure(cmd)
    info = json.loads((out_dir / "run.json").read_text())
    session = info["sessions"][-1]
    report = measure([sys.executable, "-m", "visioneval", "report", str(out_dir)])
    page = out_dir / "report.html"
    return {"client": "visioneval", "n": session["finished"], "errors": session["errors"],
            "seconds": session["seconds"], "run_cpu": session["cpu_seconds"],
            "wall": result["wall"], "cpu": result["cpu"], "rss": result["rss"],
            "endpoints": session.get("endpoints"),
            "journal_mb": (out_dir / "samples.jsonl").stat().st_size / 1e6,
            "report": {"wall": report["wall"], "cpu": report["cpu"], "rss": report["rss"],
                       "mb": page.stat().st_size / 1e6 if page.exists() else None}}


def run_bare(urls: list[str], data: Path, concurrency: int) -> dict:
    cmd = [sys.executable, __file__, "--bare-client", ",".join(urls), str(data),
           str(concurrency)]
    result = measure(cmd)
    return json.loads(result["stdout"].strip().splitlines()[-1]) | {
        "wall": result["wall"], "cpu": result["cpu"], "rss": result["rss"]}


async def bare_client(urls: list[str], data: Path, concurrency: int) -> dict:
    """aiohttp, one session and one semaphore per endpoint, requests dealt round robin;
    at most concurrency x endpoints in flight, rows read as slots free up."""
    import aiohttp

    from visioneval.backends import body
    from visioneval.backends.openai import chat_payload
    from visioneval.benchmarks.illusionbench.benchmark import IllusionBenchOptions, build
    from visioneval.core.records import GenerationSettings, Request, Sample

    benchmark = build(IllusionBenchOptions(data_dir=str(data), protocol="all"))
    settings = GenerationSettings(max_tokens=128)
    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))
                for _ in urls]
    gates = [asyncio.Semaphore(concurrency) for _ in urls]
    slots = asyncio.Semaphore(concurrency * len(urls))
    n = errors = 0
    tasks: set[asyncio.Task] = set()

    async def one(sample: Sample, k: int) -> None:
        nonlocal n, errors
        try:
            async with gates[k]:
                payload = body.dumps(chat_payload("m", Request(sample.messages, settings)))
                async with sessions[k].post(urls[k] + "/chat/completions", data=payload,
                                            headers={"Content-Type": "application/json"}
                                            ) as resp:
                    reply = await resp.json()
                    reply["choices"][0]["message"]["content"]
            n += 1
        except Exception:
            errors += 1
        finally:
            slots.release()

    start, cpu_start = time.perf_counter(), time.process_time()
    for sample, k in zip(benchmark.samples(), itertools.cycle(range(len(urls)))):
        if not isinstance(sample, Sample):
            continue
        await slots.acquire()
        task = asyncio.create_task(one(sample, k))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    for session in sessions:
        await session.close()
    return {"client": "aiohttp", "n": n, "errors": errors, "seconds": seconds,
            "run_cpu": cpu}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--bare-client":
        urls, data, concurrency = sys.argv[2].split(","), Path(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(asyncio.run(bare_client(urls, data, concurrency))))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10835,
                        help="rows per part (ICON, LOGO, IN); 10835 = 32,505 images")
    parser.add_argument("--endpoints", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=32, help="in flight per endpoint")
    parser.add_argument("--skip-bare", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "visioneval", "data", "synth-illusionbench",
                        "--out", str(data), "--n", str(args.rows)], check=True, env=ENV,
                       stdout=subprocess.DEVNULL)
        print(f"dataset: {args.rows} rows x 3 parts, made in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr)
        servers, urls = start_servers(args.endpoints)
        throughput._child_cpu()  # count only the clients' CPU from here on
        try:
            results = [run_visioneval(urls, data, work, args.concurrency)]
            if not args.skip_bare:
                results.append(run_bare(urls, data, args.concurrency))
        finally:
            for server in servers:
                server.terminate()
                server.wait()
    ideal = args.endpoints * args.concurrency / LATENCY
    print(throughput.table(results, ideal, unit="request"))
    run = results[0]
    report = run["report"]
    print(f"\njournal {run['journal_mb']:.0f} MB; `visioneval report`: {report['wall']:.1f} s "
          f"wall, {report['cpu']:.1f} s CPU, peak RSS {report['rss']:.0f} MB, page "
          f"{report['mb'] or 0:.1f} MB")
    if run["endpoints"]:
        print("\nper endpoint: " + json.dumps(run["endpoints"]))


if __name__ == "__main__":
    main()
