"""ginkgodb's benchmark suite: workloads W1-W15 against ginkgodb and its peers, plus floors.

Entry point: `python -m bench` (bench/run.py). One target runs per process (bench/worker.py).
"""
