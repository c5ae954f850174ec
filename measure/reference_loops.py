"""Two bare reference clients for the throughput benchmark: the same requests visioneval
sends (each row's stored image as a data URL, then the question), with nothing else.

    python measure/reference_loops.py {openai,aiohttp} BASE_URL DATA_DIR CONFIG CONCURRENCY [N]

Prints one JSON line: {"client", "n", "seconds", "run_cpu", "errors"} for the request phase
(from reading the first row to the last answer; start-up and imports excluded).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq


def rows(data_dir: Path, config: str, limit: int | None):
    n = 0
    for path in sorted((data_dir / config).rglob("*.parquet")):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=32,
                                                       columns=["image", "question"]):
            for row in batch.to_pylist():
                if limit is not None and n >= limit:
                    return
                n += 1
                yield row


def messages(row) -> list[dict]:
    url = "data:image/png;base64," + base64.b64encode(row["image"]["bytes"]).decode()
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": row["question"]}]}]


async def with_openai(base_url: str, data_dir: Path, config: str, concurrency: int,
                      limit: int | None):
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(row):
        async with gate:
            reply = await client.chat.completions.create(
                model="m", messages=messages(row), temperature=0, max_tokens=128)
            return reply.choices[0].message.content

    return await _drive(one, data_dir, config, concurrency, limit)


async def with_aiohttp(base_url: str, data_dir: Path, config: str, concurrency: int,
                       limit: int | None):
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
        async def one(row):
            async with gate:
                body = {"model": "m", "messages": messages(row), "temperature": 0,
                        "max_tokens": 128}
                async with s.post(base_url + "/chat/completions", json=body) as resp:
                    reply = await resp.json()
                    return reply["choices"][0]["message"]["content"]

        return await _drive(one, data_dir, config, concurrency, limit)


async def _drive(one, data_dir: Path, config: str, concurrency: int, limit: int | None):
    """Schedule rows as slots free up, so memory holds only the rows in flight."""
    slots = asyncio.Semaphore(concurrency)
    tasks, errors, n = set(), 0, 0
    start, cpu_start = time.perf_counter(), time.process_time()

    async def run(row):
        nonlocal errors
        try:
            await one(row)
        except Exception:
            errors += 1
        finally:
            slots.release()

    for row in rows(data_dir, config, limit):
        await slots.acquire()
        n += 1
        task = asyncio.create_task(run(row))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    return n, time.perf_counter() - start, time.process_time() - cpu_start, errors


def main() -> None:
    client, base_url, data_dir, config, concurrency = sys.argv[1:6]
    limit = int(sys.argv[6]) if len(sys.argv) > 6 else None
    driver = {"openai": with_openai, "aiohttp": with_aiohttp}[client]
    n, seconds, cpu, errors = asyncio.run(driver(base_url, Path(data_dir), config,
                                                 int(concurrency), limit))
    print(json.dumps({"client": client, "n": n, "seconds": seconds, "run_cpu": cpu,
                      "errors": errors}))


if __name__ == "__main__":
    main()
