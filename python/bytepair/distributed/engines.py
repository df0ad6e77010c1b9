"""Where shards run: local worker processes, or actors on a Ray cluster.

A job is a picklable callable (it holds the Encoding or the pattern, the input list and the
options). It is sent to each worker once: as the initializer argument of a local process pool,
or through the object store (``ray.put``) to each Ray actor's constructor. Only shard
descriptions travel per task, and only small results (a shard's record, or piece counts) come
back.

Failures. A Ray actor whose process dies is restarted and its task retried (``max_retries``
times, Ray's own mechanism); a local pool whose process dies is started again with the shards
not yet done, as many times. An error raised by the job itself (a bad input) is not retried:
it stops the job and is raised in the caller, unchanged.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Literal, TypeVar

from bytepair.distributed._deps import require_ray

T = TypeVar("T")
R = TypeVar("R")
Engine = Literal["ray", "local"]

_job: Callable[[Any], Any] | None = None


def _init_local(job_file: str) -> None:
    global _job
    with open(job_file, "rb") as f:
        _job = pickle.load(f)


def _run_local_task(task: Any) -> Any:
    assert _job is not None, "worker not initialized"
    return _job(task)


def run(
    job: Callable[[T], R],
    tasks: Sequence[T],
    *,
    engine: Engine,
    num_workers: int | None,
    threads_per_worker: int = 1,
    max_retries: int = 3,
) -> Iterator[tuple[int, R]]:
    """Run ``job`` on every task; yield ``(task position, result)`` as tasks finish."""
    if engine == "local":
        return _run_local(job, tasks, num_workers, threads_per_worker, max_retries)
    if engine == "ray":
        return _run_ray(job, tasks, num_workers, threads_per_worker, max_retries)
    raise ValueError(f'engine must be "ray" or "local", got {engine!r}')


def local_workers(num_workers: int | None, threads_per_worker: int) -> int:
    if num_workers is None:
        return max(1, (os.cpu_count() or 1) // threads_per_worker)
    return num_workers


def _run_local(
    job: Callable[[T], R],
    tasks: Sequence[T],
    num_workers: int | None,
    threads_per_worker: int,
    max_retries: int,
) -> Iterator[tuple[int, R]]:
    workers = local_workers(num_workers, threads_per_worker)
    if workers == 0:  # in this process: plain tracebacks, debuggers work
        for i, task in enumerate(tasks):
            yield i, job(task)
        return
    # The job is pickled once, to a file each worker reads when it starts. (Handing it to the
    # pool as an initializer argument would pickle it into every worker's start-up pipe, and
    # a worker that dies while starting would leave this process blocked writing to it.)
    with tempfile.NamedTemporaryFile(prefix="bytepair-job-", suffix=".pkl") as job_file:
        pickle.dump(job, job_file, protocol=pickle.HIGHEST_PROTOCOL)
        job_file.flush()
        yield from _run_pool(job_file.name, tasks, workers, max_retries)


def _context() -> multiprocessing.context.BaseContext:
    """Where local workers come from: a fork server that has imported this package once (a
    worker then starts in milliseconds, not in the time an interpreter takes to import numpy
    and bytepair), or, where there is none, a fresh interpreter per worker ("spawn"). Never a
    fork of the calling process, which may have threads running."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def start_local_workers(engine: Engine, num_workers: int | None) -> None:
    """Start the fork server now, so that it imports while the caller plans the job."""
    if engine == "local" and num_workers != 0:
        context = _context()
        if context.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()


def _run_pool(
    job_file: str, tasks: Sequence[T], workers: int, max_retries: int
) -> Iterator[tuple[int, Any]]:
    pending = dict(enumerate(tasks))
    crashes = 0
    context = _context()
    while pending:
        pool = ProcessPoolExecutor(
            min(workers, len(pending)),
            mp_context=context,
            initializer=_init_local,
            initargs=(job_file,),
        )
        futures: dict[Future[Any], int] = {}
        try:
            for i, task in pending.items():
                futures[pool.submit(_run_local_task, task)] = i
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    if isinstance(future.exception(), BrokenProcessPool):
                        continue
                    i = futures[future]
                    result = future.result()
                    del pending[i]
                    yield i, result
        except BrokenProcessPool:
            pass
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if pending:
            crashes += 1
            if crashes > max_retries:
                raise RuntimeError(
                    f"a worker process died {crashes} times ({len(pending)} shard(s) left); "
                    "finished shards are kept: run the same call again to resume. If workers "
                    "die at once, see their error above: a script must start the job under "
                    "`if __name__ == '__main__':`, as worker processes import it"
                )


class _RayWorker:
    """A Ray actor that runs tasks of one job, read once from the object store."""

    def __init__(self) -> None:
        self._job: Callable[[Any], Any] | None = None

    def run(self, job_ref: list[Any], task: Any) -> Any:
        # Each call carries only a reference to the job (wrapped in a list, so Ray passes it
        # unresolved); the job itself is fetched on the first call, and again by an actor
        # restarted after a crash. (A reference among the constructor's arguments would not
        # survive every restart: ray-project/ray#53727.)
        if self._job is None:
            self._job = require_ray().get(job_ref[0])
        return self._job(task)


def ray_workers(ray: Any, num_workers: int | None, threads_per_worker: int) -> int:
    if num_workers is not None:
        return num_workers
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, cpus // threads_per_worker)


def _run_ray(
    job: Callable[[T], R],
    tasks: Sequence[T],
    num_workers: int | None,
    threads_per_worker: int,
    max_retries: int,
) -> Iterator[tuple[int, R]]:
    ray = require_ray()
    if not tasks:
        return
    if not ray.is_initialized():
        ray.init()  # joins the cluster named by RAY_ADDRESS, or starts a local one
    workers = max(1, min(ray_workers(ray, num_workers, threads_per_worker), len(tasks)))
    actor_class = ray.remote(_RayWorker).options(
        num_cpus=threads_per_worker,
        max_restarts=max_retries,
        max_task_retries=max_retries,
    )
    job_ref = ray.put(job)
    actors = [actor_class.remote() for _ in range(workers)]
    queue = deque(enumerate(tasks))
    running: dict[Any, tuple[int, Any]] = {}

    def submit(actor: Any) -> None:
        if queue:
            i, task = queue.popleft()
            running[actor.run.remote([job_ref], task)] = (i, actor)

    try:
        # Two tasks per actor: the next shard is queued while one runs.
        for _ in range(2):
            for actor in actors:
                submit(actor)
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                i, actor = running.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    raise e.cause from None
                except ray.exceptions.RayActorError as e:
                    raise RuntimeError(
                        f"a Ray worker died more than {max_retries} times running shard {i}; "
                        "finished shards are kept: run the same call again to resume"
                    ) from e
                submit(actor)
                yield i, result
    finally:
        for actor in actors:  # also stops the tasks still running after an error
            ray.kill(actor)
