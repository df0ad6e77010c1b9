"""Where shards run: local worker processes, or actors on a Ray cluster.

A job is a picklable callable (it holds the Encoding or the pattern, the input list and the
options). It is sent to each worker once per job: through a file each local worker reads, or
through the object store (``ray.put``) to each Ray actor. Only shard descriptions travel per
task, and only small results (a shard's record, or piece counts) come back.

Lifetime. ``engine="local"`` or ``"ray"`` starts workers for one call and stops them at its
end. A :class:`Workers` keeps them from one job to the next (``engine=workers``): a job then
costs no start-up, which is most of a Ray job of a few seconds.

Failures. A Ray actor whose process dies is restarted and its task retried (``max_retries``
times, Ray's own mechanism); a local pool whose process dies is started again with the shards
not yet done, as many times. An error raised by the job itself (a bad input) is not retried:
it stops the job, and the workers, and is raised in the caller unchanged; a :class:`Workers`
starts new ones for its next job.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import tempfile
import threading
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Literal, TypeVar

from bytepair.distributed._deps import require_ray

T = TypeVar("T")
R = TypeVar("R")
Engine = Literal["ray", "local"]
ENGINES = ("ray", "local")
DEFAULT_THREADS_PER_WORKER = 1
DEFAULT_MAX_RETRIES = 3


def check_positive(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return value


def check_engine(engine: object) -> None:
    if not isinstance(engine, Workers) and engine not in ENGINES:
        raise ValueError(f'engine must be "ray", "local" or a Workers, got {engine!r}')


class Workers:
    """Worker processes or Ray actors kept from one job to the next.

    ``tokenize``, ``count_pieces`` and ``train`` start their workers for the call and stop them
    at its end; given ``engine=workers`` they run on these instead, one job at a time. Use it as
    a context manager (or call :meth:`close`): Ray actors hold their CPUs until then::

        with Workers("ray", num_workers=8) as workers:
            counts = count_pieces(files, engine=workers)
            tokenize(files, enc, "out/", engine=workers)

    Args:
        engine: ``"ray"`` (the cluster ``RAY_ADDRESS`` names, or a local one; actors are
            started now) or ``"local"`` (processes on this machine, started by the first job).
        num_workers: processes or actors (default: all CPUs ``// threads_per_worker``); for
            ``"local"``, 0 runs jobs in this process.
        threads_per_worker: encoding threads (and CPUs reserved) per worker.
        max_retries: how often, per job, a worker that died is replaced and its shard retried.
    """

    def __init__(
        self,
        engine: Engine = "ray",
        num_workers: int | None = None,
        *,
        threads_per_worker: int = DEFAULT_THREADS_PER_WORKER,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f'engine must be "ray" or "local", got {engine!r}')
        check_positive("threads_per_worker", threads_per_worker)
        check_positive("max_retries", max_retries, 0)
        if num_workers is not None:
            check_positive("num_workers", num_workers, 0 if engine == "local" else 1)
        self.engine: Engine = engine
        self.threads_per_worker = threads_per_worker
        self.max_retries = max_retries
        self._backend: _LocalWorkers | _RayWorkers
        if engine == "local":
            start_local_workers(engine, num_workers)
            self._backend = _LocalWorkers(
                local_workers(num_workers, threads_per_worker), max_retries
            )
        else:
            self._backend = _RayWorkers(num_workers, threads_per_worker, max_retries)
            self._backend.start(wait=True)
        self.num_workers = self._backend.count
        self.closed = False
        # One job at a time: a failing job stops the workers, which another job would lose.
        self._running = threading.Lock()

    def _check_closed(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self!r} is closed: start another Workers for this job")

    def _check_free(self) -> None:
        """Raise if no job can start on these workers now (closed, or running another)."""
        self._check_closed()
        if self._running.locked():
            raise RuntimeError(f"{self!r} is running another job: one job at a time")

    def run(self, job: Callable[[T], R], tasks: Sequence[T]) -> Generator[tuple[int, R]]:
        """Run ``job`` on every task; yield ``(task position, result)`` as tasks finish
        (closing the generator early stops the workers, as a failing job does)."""
        self._check_free()
        return self._run(job, tasks)

    def _run(self, job: Callable[[T], R], tasks: Sequence[T]) -> Generator[tuple[int, R]]:
        if not self._running.acquire(blocking=False):
            raise RuntimeError(f"{self!r} is running another job: one job at a time")
        try:
            self._check_closed()
            yield from self._backend.run(job, tasks)
        finally:
            self._running.release()

    def close(self) -> None:
        """Stop the workers (a job still running on them fails); a closed Workers runs no
        more jobs."""
        self.closed = True
        self._backend.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Workers({self.engine!r}, num_workers={self.num_workers}, "
            f"threads_per_worker={self.threads_per_worker}, max_retries={self.max_retries})"
        )


def worker_options(
    engine: Engine | Workers,
    num_workers: int | None,
    threads_per_worker: int | None,
    max_retries: int | None,
) -> tuple[int, int]:
    """Check a job's worker arguments; return its threads per worker and retries. With a
    :class:`Workers`, those are its own, and passing them again is an error."""
    check_engine(engine)
    if isinstance(engine, Workers):
        engine._check_free()  # before the job touches its output
        given = {
            "num_workers": num_workers,
            "threads_per_worker": threads_per_worker,
            "max_retries": max_retries,
        }
        for name, value in given.items():
            if value is not None:
                raise ValueError(f"{name} is set by the Workers (engine=...); leave it out here")
        return engine.threads_per_worker, engine.max_retries
    threads = DEFAULT_THREADS_PER_WORKER if threads_per_worker is None else threads_per_worker
    retries = DEFAULT_MAX_RETRIES if max_retries is None else max_retries
    check_positive("threads_per_worker", threads)
    check_positive("max_retries", retries, 0)
    if num_workers is not None:
        check_positive("num_workers", num_workers, 0 if engine == "local" else 1)
    return threads, retries


def run(
    job: Callable[[T], R],
    tasks: Sequence[T],
    *,
    engine: Engine | Workers,
    num_workers: int | None,
    threads_per_worker: int = DEFAULT_THREADS_PER_WORKER,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> Iterator[tuple[int, R]]:
    """Run ``job`` on every task; yield ``(task position, result)`` as tasks finish."""
    if isinstance(engine, Workers):
        return engine.run(job, tasks)
    if engine == "local":
        workers = local_workers(num_workers, threads_per_worker)
        return _for_one_job(_LocalWorkers(min(workers, len(tasks)), max_retries), job, tasks)
    if engine == "ray":
        if not tasks:
            return iter(())
        backend = _RayWorkers(num_workers, threads_per_worker, max_retries, at_most=len(tasks))
        return _for_one_job(backend, job, tasks)
    raise ValueError(f'engine must be "ray", "local" or a Workers, got {engine!r}')


def _for_one_job(
    backend: _LocalWorkers | _RayWorkers, job: Callable[[T], R], tasks: Sequence[T]
) -> Iterator[tuple[int, R]]:
    try:
        yield from backend.run(job, tasks)
    finally:
        backend.close()


# ---- local processes --------------------------------------------------------------------------


def local_workers(num_workers: int | None, threads_per_worker: int) -> int:
    if num_workers is None:
        return max(1, (os.cpu_count() or 1) // threads_per_worker)
    return num_workers


_job: tuple[str, Callable[[Any], Any]] | None = None


def _run_local_task(key: str, job_file: str, task: Any) -> Any:
    global _job
    if _job is None or _job[0] != key:
        with open(job_file, "rb") as f:
            _job = (key, pickle.load(f))
    return _job[1](task)


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


def start_local_workers(engine: Engine | Workers, num_workers: int | None) -> None:
    """Start the fork server now, so that it imports while the caller plans the job."""
    if engine == "local" and num_workers != 0:
        context = _context()
        if context.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()


class _LocalWorkers:
    """A process pool kept between jobs; replaced when one of its processes dies."""

    def __init__(self, count: int, max_retries: int) -> None:
        self.count = count
        self.max_retries = max_retries
        self._pool: ProcessPoolExecutor | None = None

    def _shut_down(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        self._shut_down()

    def run(self, job: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        if self.count == 0:  # in this process: plain tracebacks, debuggers work
            for i, task in enumerate(tasks):
                yield i, job(task)
            return
        # The job is pickled once, to a file each worker reads on its first task of the job.
        # (Handing it to the pool as an initializer argument would pickle it into every
        # worker's start-up pipe, and a worker that dies while starting would leave this
        # process blocked writing to it.)
        with tempfile.NamedTemporaryFile(prefix="bytepair-job-", suffix=".pkl") as job_file:
            pickle.dump(job, job_file, protocol=pickle.HIGHEST_PROTOCOL)
            job_file.flush()
            yield from self._run_tasks(uuid.uuid4().hex, job_file.name, tasks)

    def _run_tasks(self, key: str, job_file: str, tasks: Sequence[T]) -> Iterator[tuple[int, Any]]:
        pending = dict(enumerate(tasks))
        crashes = 0
        while pending:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.count, mp_context=_context())
            futures: dict[Future[Any], int] = {}
            try:
                for i, task in pending.items():
                    futures[self._pool.submit(_run_local_task, key, job_file, task)] = i
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
            except BaseException:  # the job's error, or the caller stopped: stop the rest
                self._shut_down()
                raise
            if pending:
                self._shut_down()
                crashes += 1
                if crashes > self.max_retries:
                    raise RuntimeError(
                        f"a worker process died {crashes} times ({len(pending)} shard(s) left); "
                        "finished shards are kept: run the same call again to resume. If "
                        "workers die at once, see their error above: a script must start the "
                        "job under `if __name__ == '__main__':`, as worker processes import it"
                    )


# ---- Ray actors -------------------------------------------------------------------------------


class _RayWorker:
    """A Ray actor that runs tasks of a job, read once per job from the object store."""

    def __init__(self) -> None:
        self._job: tuple[str, Callable[[Any], Any]] | None = None

    def ready(self) -> bool:
        return True

    def run(self, key: str, job_ref: list[Any], task: Any) -> Any:
        # Each call carries only a reference to the job (wrapped in a list, so Ray passes it
        # unresolved); the job itself is fetched on the job's first call, and again by an
        # actor restarted after a crash. (A reference among the constructor's arguments would
        # not survive every restart: ray-project/ray#53727.)
        if self._job is None or self._job[0] != key:
            self._job = (key, require_ray().get(job_ref[0]))
        return self._job[1](task)


def ray_workers(ray: Any, num_workers: int | None, threads_per_worker: int) -> int:
    if num_workers is not None:
        return num_workers
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, cpus // threads_per_worker)


class _RayWorkers:
    """Actors kept between jobs; all of them stopped (and started again by the next job) when
    a job fails."""

    def __init__(
        self,
        num_workers: int | None,
        threads_per_worker: int,
        max_retries: int,
        at_most: int | None = None,
    ) -> None:
        self._ray = ray = require_ray()
        if not ray.is_initialized():
            ray.init()  # joins the cluster named by RAY_ADDRESS, or starts a local one
        count = ray_workers(ray, num_workers, threads_per_worker)
        self.count = max(1, count if at_most is None else min(count, at_most))
        self.max_retries = max_retries
        self._actor_class = ray.remote(_RayWorker).options(
            num_cpus=threads_per_worker,
            max_restarts=max_retries,
            max_task_retries=max_retries,
        )
        self._actors: list[Any] = []

    def start(self, *, wait: bool = False) -> None:
        if not self._actors:
            self._actors = [self._actor_class.remote() for _ in range(self.count)]
        if wait:
            self._ray.get([actor.ready.remote() for actor in self._actors])

    def close(self) -> None:
        for actor in self._actors:  # also stops the tasks still running
            self._ray.kill(actor)
        self._actors = []

    def run(self, job: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        ray = self._ray
        if not tasks:
            return
        self.start()
        key = uuid.uuid4().hex
        job_ref = [ray.put(job)]
        queue = deque(enumerate(tasks))
        running: dict[Any, tuple[int, Any]] = {}

        def submit(actor: Any) -> None:
            if queue:
                i, task = queue.popleft()
                running[actor.run.remote(key, job_ref, task)] = (i, actor)

        try:
            # Two tasks per actor: the next shard is queued while one runs.
            for _ in range(2):
                for actor in self._actors:
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
                            f"a Ray worker died more than {self.max_retries} times running "
                            f"shard {i}; finished shards are kept: run the same call again to "
                            "resume"
                        ) from e
                    submit(actor)
                    yield i, result
        except BaseException:  # the job's error, or the caller stopped: stop the rest
            self.close()
            raise
